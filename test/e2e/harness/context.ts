/**
 * An n8n test context: one n8n version, one temp folder holding the n8n user folder and
 * the logs, one fixed HTTP port (so webhook URLs survive restarts). Every n8n process of
 * the context is started through it; `dispose()` kills whatever is left and removes the
 * temp folder (kept when a test failed or with N8N_E2E_KEEP=1).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { getFreePort, n8nEnv, type N8nEnvOptions, type PublicationService } from './env';
import { ensureN8n, type N8nInstall } from './install';
import { installPackage, installWithNpm, type InstalledPackage } from './package';
import { runLogged, spawnLogged, stopProcess, tailFile, type RunResult } from './processes';

export interface N8nContextOptions {
	/** n8n version, e.g. N8N_VERSIONS.v1 ('1.123.81') or N8N_VERSIONS.v2 ('2.41.1'). */
	version: string;
	/** 2.x only: n8n's default publication service, or switched off. Default 'default'. */
	publicationService?: PublicationService;
	/** `npm pack` tarballs installed as community packages before n8n first runs. */
	packageTarballs?: string[];
	/** Extra environment for every n8n process (undefined removes a variable). */
	env?: Record<string, string | undefined>;
	logLevel?: N8nEnvOptions['logLevel'];
	/** Part of the temp folder's name. */
	label?: string;
}

export interface N8nCommandOptions {
	/** Default 3 minutes. */
	timeoutMs?: number;
	/** Name of the log file (numbered automatically). */
	logName?: string;
	/** Extra environment for this process only. */
	env?: Record<string, string | undefined>;
}

/** Error whose message ends with the tail of the relevant n8n log(s). */
export class N8nHarnessError extends Error {
	constructor(message: string, logTail?: string) {
		super(logTail ? `${message}\n\n${logTail}` : message);
		this.name = 'N8nHarnessError';
	}
}

export class N8nContext {
	readonly version: string;
	readonly major: number;
	readonly install: N8nInstall;
	/** The test's temp folder. */
	readonly rootDir: string;
	/** N8N_USER_FOLDER (n8n keeps its data in `<userFolder>/.n8n`). */
	readonly userFolder: string;
	readonly logDir: string;
	/** Fixed HTTP port of `n8n start` in this context. */
	readonly port: number;
	readonly baseUrl: string;
	readonly publicationService: PublicationService;
	readonly packages: InstalledPackage[] = [];
	/** Set when a test using the context failed: the temp folder is kept. */
	failed = false;
	/** Login and API key, kept across restarts (the user folder keeps them too). */
	auth: { email: string; password: string; apiKey?: string } | undefined;
	/**
	 * Its n8n serves the lane's next test files too (laneServer.ts): `dispose` leaves that
	 * n8n and the folder to the lane's teardown.
	 */
	sharedByLane = false;
	/** The lane's n8n this context attached to, or handed on. */
	laneServer: { pid: number; logFile: string } | undefined;

	private logCounter = 0;
	private readonly options: N8nContextOptions;
	private readonly children = new Set<ChildProcess>();
	/** Added by `addEnv` (e.g. the queue-mode database and Redis, known only once started). */
	private addedEnv: Record<string, string | undefined> = {};
	private readonly disposers: Array<() => Promise<void>> = [];

	constructor(options: N8nContextOptions, install: N8nInstall, rootDir: string, port: number) {
		this.options = options;
		this.version = options.version;
		this.install = install;
		this.major = install.major;
		this.rootDir = rootDir;
		this.userFolder = join(rootDir, 'user');
		this.logDir = join(rootDir, 'logs');
		this.port = port;
		this.baseUrl = `http://127.0.0.1:${port}`;
		this.publicationService = options.publicationService ?? 'default';
		mkdirSync(this.userFolder, { recursive: true });
		mkdirSync(this.logDir, { recursive: true });
		// A folder an earlier test file used (a lane's n8n): new logs get numbers of their own.
		this.logCounter = readdirSync(this.logDir).length;
	}

	/** True on 2.x with its publication service on: activation completes asynchronously. */
	get asyncPublication(): boolean {
		return this.major >= 2 && this.publicationService !== 'off';
	}

	/**
	 * n8n's own end-to-end mode (`E2E_TESTS=true` in the context's environment): the
	 * `/rest/e2e` endpoints (e.g. `PATCH /rest/e2e/feature` to switch a licensed feature on).
	 */
	get e2eMode(): boolean {
		return { ...this.options.env, ...this.addedEnv }.E2E_TESTS === 'true';
	}

	/**
	 * False on 1.x in its end-to-end mode (its `config/index.js` sets `publicApi.disabled`):
	 * the server then works through the REST API with the owner's cookie, without an API key.
	 */
	get publicApi(): boolean {
		return this.major >= 2 || !this.e2eMode;
	}

	/** Queue mode (`EXECUTIONS_MODE=queue`): a main enqueues, workers run the executions. */
	get queueMode(): boolean {
		return { ...this.options.env, ...this.addedEnv }.EXECUTIONS_MODE === 'queue';
	}

	/** Environment of an n8n process of this context (with a fresh task-broker port). */
	async env(extra?: Record<string, string | undefined>): Promise<NodeJS.ProcessEnv> {
		return n8nEnv(this.version, this.userFolder, this.port, {
			publicationService: this.publicationService,
			runnersBrokerPort: await getFreePort(),
			logLevel: this.options.logLevel,
			extra: { ...this.options.env, ...this.addedEnv, ...extra },
		});
	}

	/** Adds environment for every n8n process started from now on. */
	addEnv(vars: Record<string, string | undefined>): void {
		this.addedEnv = { ...this.addedEnv, ...vars };
	}

	/** Runs `fn` when the context is disposed, after its n8n processes stopped (newest first). */
	onDispose(fn: () => Promise<void>): void {
		this.disposers.unshift(fn);
	}

	/** A new numbered log file path: `<logDir>/<nn>-<name>.log`. */
	newLogFile(name: string): string {
		this.logCounter += 1;
		return join(this.logDir, `${String(this.logCounter).padStart(2, '0')}-${name.replace(/[^\w.-]+/g, '_')}.log`);
	}

	/** Runs `n8n <args>` to completion (never throws on exit code; see RunResult). */
	async runN8n(args: string[], options: N8nCommandOptions = {}): Promise<RunResult & { logFile: string }> {
		const logFile = this.newLogFile(options.logName ?? args[0]);
		const result = await runLogged(this.install.nodeBin, [this.install.n8nBin, ...args], {
			env: await this.env(options.env),
			cwd: this.rootDir,
			logFile,
			timeoutMs: options.timeoutMs ?? 3 * 60_000,
			onSpawn: (child) => this.track(child),
		});
		return { ...result, logFile };
	}

	/** Starts a long-running `n8n <args>` (e.g. `start`), output to a log file. */
	async spawnN8n(args: string[], options: N8nCommandOptions = {}): Promise<{ child: ChildProcess; logFile: string }> {
		const logFile = this.newLogFile(options.logName ?? args[0]);
		const child = spawnLogged(this.install.nodeBin, [this.install.n8nBin, ...args], {
			env: await this.env(options.env),
			cwd: this.rootDir,
			logFile,
		});
		this.track(child);
		return { child, logFile };
	}

	private track(child: ChildProcess): void {
		this.children.add(child);
		child.once('exit', () => this.children.delete(child));
	}

	/** A process handed on (laneServer.ts): `dispose` no longer stops it. */
	forget(child: ChildProcess): void {
		this.children.delete(child);
	}

	/**
	 * Installs a packed community package into this context's user folder: as the Community
	 * Nodes screen does, or with `npm install --prefix` as docs/queue-mode.md says for images and workers.
	 */
	installPackage(tarballPath: string, how: 'screen' | 'npm' = 'screen'): InstalledPackage {
		const install = how === 'npm' ? installWithNpm : installPackage;
		const installed = install(this.userFolder, tarballPath, { nodeBin: this.install.nodeBin });
		this.packages.push(installed);
		return installed;
	}

	/** Tails of the most recent log files, newest last, for error messages. */
	logTails(lines = 40, files = 3): string {
		let names: string[] = [];
		try {
			names = readdirSync(this.logDir).filter((f) => f.endsWith('.log')).sort();
		} catch {
			return '';
		}
		return names
			.slice(-files)
			.map((name) => `----- ${join(this.logDir, name)} (last ${lines} lines)\n${tailFile(join(this.logDir, name), lines)}`)
			.join('\n');
	}

	/**
	 * Kills this context's processes; removes the temp folder unless failed, N8N_E2E_KEEP=1 or
	 * shared by the lane.
	 */
	async dispose(): Promise<void> {
		await Promise.all([...this.children].map(async (child) => await stopProcess(child, 10_000)));
		for (const dispose of this.disposers.splice(0)) await dispose();
		if (this.sharedByLane) {
			if (this.failed) writeFileSync(join(this.rootDir, '.failed'), '', 'utf8');
			return;
		}
		if (this.failed || process.env.N8N_E2E_KEEP === '1') {
			process.stderr.write(`n8n e2e: kept ${this.rootDir}\n`);
			return;
		}
		rmSync(this.rootDir, { recursive: true, force: true, maxRetries: 3 });
	}
}

/**
 * Creates a context: installs n8n `version` if needed (cached), a temp folder with a
 * user folder, a free port, and the given community packages installed.
 */
export async function createN8nContext(options: N8nContextOptions): Promise<N8nContext> {
	const install = ensureN8n(options.version);
	const label = [options.label, options.version, options.publicationService === 'off' ? 'nopub' : '']
		.filter(Boolean)
		.join('-');
	const rootDir = mkdtempSync(join(tmpdir(), `n8n-e2e-${label}-`));
	const ctx = new N8nContext(options, install, rootDir, await getFreePort());
	for (const tarball of options.packageTarballs ?? []) ctx.installPackage(tarball);
	return ctx;
}
