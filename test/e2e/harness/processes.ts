/**
 * Child processes of the end-to-end harness: every n8n (and npm) process is spawned
 * here, in its own process group, with its output appended to a log file, and recorded
 * so that it is always killed: by `stopProcess`, by `killAllProcesses` (called when a
 * context is disposed), and as a last resort when the test process exits or is
 * interrupted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { once } from 'node:events';

export interface SpawnOptions {
	/** Environment of the child (complete: nothing is inherited implicitly). */
	env: NodeJS.ProcessEnv;
	cwd?: string;
	/** stdout and stderr are appended to this file (interleaved, as written). */
	logFile: string;
	/** Run as this user and group (e.g. PostgreSQL, which refuses to run as root). */
	uid?: number;
	gid?: number;
}

export interface RunOptions extends SpawnOptions {
	/** Kill the process (group) and fail after this many milliseconds. */
	timeoutMs: number;
	/** Also capture stdout/stderr in memory (they always go to the log file). Default true. */
	capture?: boolean;
	/** Called with the child right after it started (e.g. to track it for cleanup). */
	onSpawn?: (child: ChildProcess) => void;
}

export interface RunResult {
	exitCode: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	timedOut: boolean;
	durationMs: number;
}

const live = new Set<ChildProcess>();
let handlersInstalled = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		try {
			child.kill(signal);
		} catch {
			// already gone
		}
	}
}

function killAllSync(): void {
	for (const child of live) killGroup(child, 'SIGKILL');
	live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
	killAllSync();
	uninstallHandlers();
	process.kill(process.pid, signal);
}
const onSigint = (): void => onSignal('SIGINT');
const onSigterm = (): void => onSignal('SIGTERM');
const onSighup = (): void => onSignal('SIGHUP');

function installHandlers(): void {
	if (handlersInstalled) return;
	handlersInstalled = true;
	process.on('exit', killAllSync);
	process.once('SIGINT', onSigint);
	process.once('SIGTERM', onSigterm);
	process.once('SIGHUP', onSighup);
}

function uninstallHandlers(): void {
	if (!handlersInstalled) return;
	handlersInstalled = false;
	process.off('exit', killAllSync);
	process.off('SIGINT', onSigint);
	process.off('SIGTERM', onSigterm);
	process.off('SIGHUP', onSighup);
}

/** Spawns `command args` in its own process group, output appended to `options.logFile`. */
export function spawnLogged(command: string, args: string[], options: SpawnOptions): ChildProcess {
	const fd = openSync(options.logFile, 'a');
	let child: ChildProcess;
	try {
		child = spawn(command, args, {
			cwd: options.cwd,
			env: options.env,
			detached: true,
			stdio: ['ignore', fd, fd],
			uid: options.uid,
			gid: options.gid,
		});
	} finally {
		closeSync(fd);
	}
	live.add(child);
	installHandlers();
	const startedAt = Date.now();
	const testPath = currentTestPath();
	child.once('exit', (code, signal) => {
		recordProcess(command, args, startedAt, testPath);
		live.delete(child);
		if (live.size === 0) uninstallHandlers();
		try {
			appendFileSync(options.logFile, `\n[harness] process ${child.pid} exited: code ${code}, signal ${signal}\n`);
		} catch {
			// log folder already removed
		}
	});
	return child;
}

/**
 * With N8N_E2E_PROCESS_LOG set (npm run test:all sets it), one JSON line per process that
 * ended: which test file started it, the command, and how long it ran. The e2e report
 * (scripts/e2e-report.mjs) counts them per file and lane: where the machine's time goes.
 */
export function recordProcess(command: string, args: string[], startedAt: number, testPath = currentTestPath()): void {
	const file = process.env.N8N_E2E_PROCESS_LOG;
	if (!file) return;
	const n8nCommand = args[0]?.endsWith('/n8n') || args[0]?.endsWith('n8n.js') ? args[1] : undefined;
	const line = { file: testPath, command: n8nCommand ? `n8n ${n8nCommand}` : command.split('/').pop(), ms: Date.now() - startedAt };
	try {
		appendFileSync(file, `${JSON.stringify(line)}\n`);
	} catch {
		// the report is a diagnostic; a test never fails on it
	}
}

/** The test file jest is running now, if any. */
export function currentTestPath(): string | undefined {
	return (globalThis as { expect?: { getState?: () => { testPath?: string } } }).expect?.getState?.().testPath;
}

/**
 * Hands a running process over to whoever knows its pid (the lane's next test files, then
 * the lane's teardown): this file's module stops watching it, so nothing of a finished test
 * file runs when it exits later.
 */
export function releaseProcess(child: ChildProcess): void {
	child.removeAllListeners('exit');
	child.unref();
	live.delete(child);
	if (live.size === 0) uninstallHandlers();
}

/** Whether a process of this pid runs (signal 0 checks without sending anything). */
export function pidAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

/** As `stopProcess`, for a process group known by its leader's pid only. */
export async function stopPid(pid: number, graceMs = 20_000, first: NodeJS.Signals = 'SIGTERM'): Promise<void> {
	const signal = (name: NodeJS.Signals) => {
		try {
			process.kill(-pid, name);
		} catch {
			// gone
		}
	};
	const gone = async (withinMs: number) => {
		const deadline = Date.now() + withinMs;
		while (pidAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
	};
	signal(first);
	await gone(graceMs);
	signal('SIGKILL');
	await gone(10_000);
}

/**
 * Stops a process group: SIGTERM (n8n shuts down gracefully), or `first`, then SIGKILL after
 * `graceMs`. Resolves once the main process has exited.
 */
export async function stopProcess(child: ChildProcess, graceMs = 20_000, first: NodeJS.Signals = 'SIGTERM'): Promise<void> {
	if (child.exitCode !== null || child.signalCode !== null) {
		killGroup(child, 'SIGKILL'); // leftovers of the group, if any
		return;
	}
	const exited = once(child, 'exit');
	killGroup(child, first);
	const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
	try {
		await exited;
	} finally {
		clearTimeout(timer);
		killGroup(child, 'SIGKILL');
	}
}

/** Kills every process the harness started that is still running. */
export async function killAllProcesses(graceMs = 10_000): Promise<void> {
	await Promise.all([...live].map(async (child) => await stopProcess(child, graceMs)));
}

/**
 * Runs a command to completion with a timeout. Output goes to the log file and,
 * with `capture`, is returned too. Never throws for a non-zero exit: callers decide.
 */
export async function runLogged(command: string, args: string[], options: RunOptions): Promise<RunResult> {
	const started = Date.now();
	const child = spawn(command, args, {
		cwd: options.cwd,
		env: options.env,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	live.add(child);
	installHandlers();
	options.onSpawn?.(child);
	const out: Buffer[] = [];
	const err: Buffer[] = [];
	appendFileSync(options.logFile, `\n$ ${command} ${args.join(' ')}\n`);
	child.stdout!.on('data', (chunk: Buffer) => {
		if (options.capture !== false) out.push(chunk);
		appendFileSync(options.logFile, chunk);
	});
	child.stderr!.on('data', (chunk: Buffer) => {
		if (options.capture !== false) err.push(chunk);
		appendFileSync(options.logFile, chunk);
	});
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		killGroup(child, 'SIGKILL');
	}, options.timeoutMs);
	const [exitCode, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
	clearTimeout(timer);
	recordProcess(command, args, started);
	appendFileSync(options.logFile, `\n[harness] exited: code ${exitCode}, signal ${signal}${timedOut ? ' (timed out)' : ''}\n`);
	killGroup(child, 'SIGKILL'); // grandchildren left behind (task runners), if any
	live.delete(child);
	if (live.size === 0) uninstallHandlers();
	return {
		exitCode,
		signal,
		stdout: Buffer.concat(out).toString('utf8'),
		stderr: Buffer.concat(err).toString('utf8'),
		timedOut,
		durationMs: Date.now() - started,
	};
}

/** The last `lines` lines of a file ('' if it does not exist). */
export function tailFile(file: string, lines = 60, maxBytes = 64 * 1024): string {
	if (!existsSync(file)) return '';
	const size = statSync(file).size;
	const fd = openSync(file, 'r');
	try {
		const length = Math.min(size, maxBytes);
		const buffer = Buffer.alloc(length);
		readSync(fd, buffer, 0, length, size - length);
		return buffer.toString('utf8').split('\n').slice(-lines).join('\n');
	} finally {
		closeSync(fd);
	}
}

/** Whole file, '' if missing. */
export function readLog(file: string): string {
	return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

/** A child process and its log file: what every n8n process of the harness is. */
export class LoggedProcess {
	/** The process this file spawned, or undefined for one known by its pid (`releaseProcess`). */
	readonly child: ChildProcess | undefined;
	private readonly releasedPid: number | undefined;

	constructor(
		spawned: ChildProcess | number,
		readonly logFile: string,
	) {
		this.child = typeof spawned === 'number' ? undefined : spawned;
		this.releasedPid = typeof spawned === 'number' ? spawned : undefined;
	}

	get pid(): number | undefined {
		return this.child ? this.child.pid : this.releasedPid;
	}

	get running(): boolean {
		if (!this.child) return this.releasedPid !== undefined && pidAlive(this.releasedPid);
		return this.child.exitCode === null && this.child.signalCode === null;
	}

	/** The whole log of this process so far. */
	log(): string {
		return readLog(this.logFile);
	}

	logTail(lines = 60): string {
		return `----- ${this.logFile} (last ${lines} lines)\n${tailFile(this.logFile, lines)}`;
	}

	/** SIGKILL at once, as the OOM killer or a pulled plug does: no shutdown at all. Resolves once it is gone. */
	async kill(): Promise<void> {
		await this.stop(0, 'SIGKILL');
	}

	/** SIGTERM (graceful shutdown), or `first`, then SIGKILL after `graceMs`. Resolves once it is gone. */
	async stop(graceMs = 20_000, first: NodeJS.Signals = 'SIGTERM'): Promise<void> {
		if (this.child) await stopProcess(this.child, graceMs, first);
		else if (this.releasedPid !== undefined) await stopPid(this.releasedPid, graceMs, first);
	}
}
