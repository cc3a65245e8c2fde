/**
 * n8n's own CLI, as an administrator uses it: `import:credentials` (plain `data`, which
 * n8n encrypts with the instance key), `import:workflow`, and `execute --id --rawOutput`,
 * which prints the run (IRun) as JSON on stdout after n8n's own log lines, on 1.123 and
 * 2.41 alike; on failure it prints the run after "Execution error:" and exits 1.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { N8nHarnessError, type N8nCommandOptions, type N8nContext } from './context';

/** A credential as `n8n import:credentials` takes it, with plain (unencrypted) data. */
export interface CredentialImport {
	/** Generated when missing (workflows refer to credentials by id). */
	id?: string;
	name: string;
	/** Credential type, e.g. 'clinicApi' or 'httpHeaderAuth'. */
	type: string;
	data: Record<string, unknown>;
}

/** A workflow as exported by n8n (the editor's "Download", or `n8n export:workflow`). */
export interface WorkflowImport {
	/** Generated when missing. */
	id?: string;
	name: string;
	nodes: Array<Record<string, unknown> & { name: string; type: string }>;
	connections: Record<string, unknown>;
	active?: boolean;
	settings?: Record<string, unknown>;
	pinData?: Record<string, unknown>;
	[key: string]: unknown;
}

/** One item as n8n passes it between nodes. */
export interface RunItem {
	json: Record<string, unknown>;
	binary?: Record<string, { mimeType?: string; fileName?: string; fileSize?: string; data?: string; id?: string }>;
	pairedItem?: unknown;
	error?: unknown;
}

/** One run of one node inside an execution. */
export interface NodeRun {
	startTime?: number;
	executionTime?: number;
	executionStatus?: string;
	source?: unknown[];
	data?: { main?: Array<RunItem[] | null> };
	error?: { message?: string; description?: string; name?: string; [key: string]: unknown };
}

/** The execution's data: `IRunExecutionData` in n8n. */
export interface RunExecutionData {
	resultData: {
		runData: Record<string, NodeRun[]>;
		lastNodeExecuted?: string;
		error?: { message?: string; description?: string; name?: string; node?: unknown; [key: string]: unknown };
	};
	[key: string]: unknown;
}

/** What `n8n execute --rawOutput` prints (`IRun` in n8n). */
export interface WorkflowRun {
	data: RunExecutionData;
	mode?: string;
	status?: string;
	finished?: boolean;
	startedAt?: string;
	stoppedAt?: string;
	[key: string]: unknown;
}

export interface ExecuteResult {
	/** Exit code 0 and no error in the run. */
	ok: boolean;
	exitCode: number | null;
	/** The run printed by n8n (also on failure, when n8n got that far). */
	run?: WorkflowRun;
	/** resultData.error.message, or why no run came out. */
	errorMessage?: string;
	/**
	 * n8n 2.41 on Node 24 sometimes dies with SIGSEGV, or on a loaded machine SIGABRT, while
	 * exiting, after it printed and stored the run (a V8 worker thread of its default 'vm'
	 * expression engine still running when the process exits; 1.123 and
	 * N8N_EXPRESSION_ENGINE=legacy do not). The run is complete then, so it counts; this flag
	 * records that it happened.
	 */
	crashedOnExit: boolean;
	stdout: string;
	logFile: string;
	durationMs: number;
}

/** A 16-character id like n8n's (letters and digits). */
export function newN8nId(): string {
	const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
	return [...randomBytes(16)].map((b) => alphabet[b % alphabet.length]).join('');
}

/**
 * The last complete top-level JSON object or array in `text` (n8n prints log lines, then
 * the JSON pretty-printed with 2-space indentation, then possibly more log lines).
 */
export function parseLastJson<T = unknown>(text: string): T | undefined {
	const lines = text.split(/\r?\n/);
	const closers: number[] = [];
	for (let i = lines.length - 1; i >= 0; i--) {
		const line = lines[i].trimEnd();
		if (line === '}' || line === ']' || (line.startsWith('{') && line.endsWith('}')) || (line.startsWith('[') && line.endsWith(']'))) {
			closers.push(i);
		}
	}
	for (const end of closers) {
		const last = lines[end].trimEnd();
		const opener = last.endsWith('}') ? '{' : '[';
		for (let start = end; start >= 0; start--) {
			const first = lines[start];
			if (!first.startsWith(opener)) continue;
			const candidate = lines.slice(start, end + 1).join('\n').trim();
			try {
				return JSON.parse(candidate) as T;
			} catch {
				// not this start; try an earlier one
			}
		}
	}
	return undefined;
}

/** Killed by SIGSEGV or SIGABRT (see ExecuteResult.crashedOnExit), not by the harness's timeout. */
function crashedAfterOutput(result: { signal: NodeJS.Signals | null; exitCode: number | null; timedOut: boolean }) {
	return !result.timedOut && (result.signal === 'SIGSEGV' || result.signal === 'SIGABRT' || result.exitCode === 139 || result.exitCode === 134);
}

function writeInput(ctx: N8nContext, name: string, value: unknown): string {
	const file = join(ctx.rootDir, `${name}-${Date.now()}-${randomBytes(3).toString('hex')}.json`);
	writeFileSync(file, JSON.stringify(value, null, 2), 'utf8');
	return file;
}

async function runImport(ctx: N8nContext, kind: 'credentials' | 'workflow', file: string, options: N8nCommandOptions) {
	const result = await ctx.runN8n([`import:${kind}`, `--input=${file}`], {
		logName: `import-${kind}`,
		...options,
	});
	const output = result.stdout + result.stderr;
	const exitedWell = result.exitCode === 0 || crashedAfterOutput(result);
	if (result.timedOut || !exitedWell || !/Successfully imported/.test(output)) {
		throw new N8nHarnessError(
			`n8n import:${kind} failed (exit ${result.exitCode}${result.timedOut ? ', timed out' : ''})`,
			ctx.logTails(40, 1),
		);
	}
}

/**
 * Imports credentials with `n8n import:credentials` (n8n encrypts the plain `data`).
 * Returns them with their ids.
 */
export async function importCredentials(
	ctx: N8nContext,
	credentials: CredentialImport[],
	options: N8nCommandOptions = {},
): Promise<Array<CredentialImport & { id: string }>> {
	const withIds = credentials.map((c) => ({ ...c, id: c.id ?? newN8nId() }));
	await runImport(ctx, 'credentials', writeInput(ctx, 'credentials', withIds), options);
	return withIds;
}

/** Imports one workflow with `n8n import:workflow`; returns its id. */
export async function importWorkflow(
	ctx: N8nContext,
	workflow: WorkflowImport,
	options: N8nCommandOptions = {},
): Promise<string> {
	const [id] = await importWorkflows(ctx, [workflow], options);
	return id;
}

/** Imports several workflows with one `n8n import:workflow` (one n8n boot); returns their ids. */
export async function importWorkflows(
	ctx: N8nContext,
	workflows: WorkflowImport[],
	options: N8nCommandOptions = {},
): Promise<string[]> {
	const withIds = workflows.map((w) => ({ active: false, settings: {}, ...w, id: w.id ?? newN8nId() }));
	await runImport(ctx, 'workflow', writeInput(ctx, 'workflows', withIds), options);
	return withIds.map((w) => w.id);
}

/**
 * Runs a workflow (it must start with a Manual Trigger) with `n8n execute --id <id>
 * --rawOutput` and returns the run. Throws when the execution failed unless
 * `allowFailure` is set (then check `ok`, `errorMessage` and `run`).
 */
export async function executeWorkflow(
	ctx: N8nContext,
	workflowId: string,
	options: N8nCommandOptions & { allowFailure?: boolean } = {},
): Promise<ExecuteResult> {
	const result = await ctx.runN8n(['execute', `--id=${workflowId}`, '--rawOutput'], {
		logName: `execute-${workflowId}`,
		...options,
	});
	const run = parseLastJson<WorkflowRun>(result.stdout);
	const looksLikeRun = run !== undefined && typeof run === 'object' && 'data' in run;
	const runError = looksLikeRun ? run.data?.resultData?.error : undefined;
	const crashedOnExit = crashedAfterOutput(result);
	const ok = (result.exitCode === 0 || crashedOnExit) && !result.timedOut && looksLikeRun && !runError;
	let errorMessage: string | undefined;
	if (!ok) {
		errorMessage = result.timedOut
			? 'n8n execute timed out'
			: runError
				? [runError.message, runError.description].filter(Boolean).join(': ')
				: `n8n execute exited ${result.exitCode} without printing a run`;
	}
	const executeResult: ExecuteResult = {
		ok,
		exitCode: result.exitCode,
		run: looksLikeRun ? run : undefined,
		errorMessage,
		crashedOnExit,
		stdout: result.stdout,
		logFile: result.logFile,
		durationMs: result.durationMs,
	};
	if (!ok && !options.allowFailure) {
		throw new N8nHarnessError(`workflow ${workflowId} failed: ${errorMessage}`, ctx.logTails(60, 1));
	}
	return executeResult;
}

type HasRunData = WorkflowRun | RunExecutionData | { data?: RunExecutionData | null };

function resultDataOf(source: HasRunData): RunExecutionData['resultData'] | undefined {
	const s = source as { data?: RunExecutionData | null; resultData?: RunExecutionData['resultData'] };
	return s.resultData ?? s.data?.resultData;
}

/**
 * The items a node output, from a CLI run (`ExecuteResult.run`) or an execution of the
 * public API (`Execution` with `data`): `[{ json, binary? }]`. `runIndex` defaults to the
 * node's last run; `output` to its first output.
 */
export function nodeItems(
	source: HasRunData,
	nodeName: string,
	options: { output?: number; runIndex?: number } = {},
): RunItem[] {
	const runs = resultDataOf(source)?.runData?.[nodeName];
	if (!runs || runs.length === 0) {
		const ran = Object.keys(resultDataOf(source)?.runData ?? {}).join(', ');
		throw new Error(`node "${nodeName}" did not run (nodes that ran: ${ran || 'none'})`);
	}
	const run = runs[options.runIndex ?? runs.length - 1];
	return run?.data?.main?.[options.output ?? 0] ?? [];
}

/** `nodeItems(...).map(i => i.json)` */
export function nodeJson(
	source: HasRunData,
	nodeName: string,
	options: { output?: number; runIndex?: number } = {},
): Array<Record<string, unknown>> {
	return nodeItems(source, nodeName, options).map((item) => item.json);
}

/**
 * The items n8n stored for a node to run and it had not run yet (a run cut off before it
 * reached the node, as a killed n8n leaves it): `executionData.nodeExecutionStack`.
 */
export function queuedJson(source: { data?: unknown }, nodeName: string): Array<Record<string, unknown>> {
	type Stack = Array<{ node?: { name?: string }; data?: { main?: Array<RunItem[] | null> } }>;
	const stack = (source.data as { executionData?: { nodeExecutionStack?: Stack } } | null | undefined)?.executionData?.nodeExecutionStack ?? [];
	return stack.filter((entry) => entry.node?.name === nodeName).flatMap((entry) => entry.data?.main?.[0] ?? []).map((item) => item.json);
}

/** The names of the nodes that ran, in the order they first ran. */
export function nodesThatRan(source: HasRunData): string[] {
	const runData = resultDataOf(source)?.runData ?? {};
	return Object.entries(runData)
		.sort(([, a], [, b]) => (a[0]?.startTime ?? 0) - (b[0]?.startTime ?? 0))
		.map(([name]) => name);
}

/** The node error of a node's last run, if it failed. */
export function nodeError(source: HasRunData, nodeName: string): NodeRun['error'] | undefined {
	const runs = resultDataOf(source)?.runData?.[nodeName];
	return runs?.[runs.length - 1]?.error;
}
