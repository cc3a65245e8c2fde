/**
 * Real n8n for the benchmarks, through the end-to-end harness (test/e2e/harness) used as
 * a plain library: one context (user folder, logs) per n8n version with this repository
 * packed and installed as a community package, workflows run with `n8n execute`, and the
 * measured node timed by n8n itself (`executionTime` of its run in the run data).
 * Contexts are created with the harness; `n8n execute` is spawned through the context
 * (so it is tracked and killed with it) with its output to a file, see `timedExecute`.
 */
import { once } from 'node:events';
import { readFileSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

import {
	N8nHarnessError,
	createN8nContext,
	importCredentials,
	importWorkflows,
	newN8nId,
	packRepository,
	parseLastJson,
	tailFile,
	type CredentialImport,
	type N8nContext,
	type NodeRun,
	type RunItem,
	type WorkflowImport,
	type WorkflowRun,
} from '../../test/e2e/harness';
import { ProcessMeter } from './proc';

export { newN8nId };
export type { CredentialImport, N8nContext, RunItem, WorkflowImport, WorkflowRun };


/** A context for `version` with this repository built, packed and installed like a user would. */
export async function benchContext(version: string, env: Record<string, string> = {}): Promise<N8nContext> {
	const ctx = await createN8nContext({ version, label: 'bench', env });
	try {
		ctx.installPackage(packRepository(ctx.rootDir, { build: true }));
	} catch (error) {
		await ctx.dispose();
		throw error;
	}
	return ctx;
}

export { importCredentials, importWorkflows };

export interface TimedRun {
	run: WorkflowRun;
	/** n8n's executionTime of the measured node (ms). */
	nodeMs: number;
	/** The measured node's run (items, error). */
	node: NodeRun;
	/** VmHWM of the `n8n execute` process (bytes). */
	peakRss: number | undefined;
	/** CPU time of the `n8n execute` process, boot included (ms; task runners not included). */
	cpuMs: number | undefined;
	/** Whole `n8n execute` process, boot included (ms). */
	processMs: number;
}

/**
 * Runs a workflow with `n8n execute --id <id> --rawOutput` and returns the measured
 * node's time and items plus the process's peak memory. Throws when the execution failed.
 *
 * Unlike the harness's `executeWorkflow`, n8n's output goes to a file, not a pipe: n8n
 * exits right after printing the run, and a pipe loses what was not flushed yet (runs of
 * tens of megabytes arrived cut off). A file is written synchronously.
 */
export async function timedExecute(
	ctx: N8nContext,
	workflowId: string,
	nodeName: string,
	options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<TimedRun> {
	const started = performance.now();
	const { child, logFile } = await ctx.spawnN8n(['execute', `--id=${workflowId}`, '--rawOutput'], {
		logName: `execute-${workflowId}`,
		env: options.env,
	});
	const meter = new ProcessMeter(child.pid!);
	const killGroup = () => {
		try {
			process.kill(-child.pid!, 'SIGKILL');
		} catch {
			// already gone
		}
	};
	const timer = setTimeout(killGroup, options.timeoutMs ?? 10 * 60_000);
	const [exitCode, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
	clearTimeout(timer);
	const { peakRss, cpuMs } = meter.stop();
	killGroup(); // task runners left behind, if any
	const processMs = performance.now() - started;

	const run = parseLastJson<WorkflowRun>(readFileSync(logFile, 'utf8'));
	// n8n 2.41 may die with SIGSEGV while exiting, after printing the run (see the harness).
	const exitedWell = exitCode === 0 || signal === 'SIGSEGV' || exitCode === 139;
	const problem = !run?.data?.resultData
		? `n8n execute exited ${exitCode ?? signal} without printing a whole run`
		: run.data.resultData.error
			? `the execution failed: ${run.data.resultData.error.message}`
			: !exitedWell
				? `n8n execute exited ${exitCode ?? signal}`
				: undefined;
	if (problem) throw new N8nHarnessError(`workflow ${workflowId}: ${problem} (log: ${logFile})`, tailFile(logFile, 30));
	rmSync(logFile, { force: true }); // runs with many items print tens of megabytes

	const node = run!.data.resultData.runData[nodeName]?.[0];
	if (!node) throw new Error(`node "${nodeName}" did not run in workflow ${workflowId}`);
	if (node.error) throw new Error(`node "${nodeName}" failed: ${node.error.message}`);
	return { run: run!, nodeMs: node.executionTime ?? Number.NaN, node, peakRss, cpuMs, processMs };
}

/** The first output's items of a node run. */
export function outputItems(node: NodeRun): RunItem[] {
	return node.data?.main?.[0] ?? [];
}
