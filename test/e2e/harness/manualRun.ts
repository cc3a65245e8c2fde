/**
 * A workflow run as the editor's "Execute workflow" runs it, in an n8n that is already
 * running: `POST /rest/workflows/:id/run` from its Manual Trigger, then the stored execution.
 * One n8n process serves every run of a test file, where `n8n execute` (cli.ts) starts a
 * whole n8n per run: on a machine of two cores that is where an end-to-end run's time went.
 */
import { N8nHarnessError } from './context';
import type { ExecuteResult, WorkflowImport, WorkflowRun } from './cli';
import { isFinished } from './executions';
import type { Execution } from './executions';
import type { N8nServer } from './server';
import { sleep, waitFor } from './waitFor';

const MANUAL_TRIGGER = 'n8n-nodes-base.manualTrigger';
/** n8n's own check of fixed record IDs, which gives up after 250 ms of wall-clock time. */
const REGEX_TIMED_OUT = 'Regular expression execution timed out';

/**
 * Whether n8n refused the run at its check of fixed record IDs against their patterns, which
 * gives up after 250 ms of wall-clock time (docs/requests-limits-and-faults.md): on a machine
 * whose cores the suite itself keeps busy it can time out. Nothing ran then, so the run is
 * asked again. A main refuses the request; in queue mode the worker fails the run.
 */
const refusedByIdCheck = (failure: unknown) => `${(failure as Error | undefined)?.message} ${JSON.stringify(failure ?? {})}`.includes(REGEX_TIMED_OUT);

/**
 * Runs the workflow from its Manual Trigger and waits until the execution has ended. The
 * result has the shape of `executeWorkflow`'s, with the execution's id; throws on a failed
 * run unless `allowFailure`.
 */
export async function runManually(
	server: N8nServer,
	workflowId: string,
	options: { allowFailure?: boolean; timeoutMs?: number } = {},
): Promise<ExecuteResult & { executionId: string }> {
	const started = Date.now();
	const workflow = await server.rest<WorkflowImport>('GET', `/workflows/${workflowId}`);
	const trigger = workflow.nodes.find((node) => node.type === MANUAL_TRIGGER);
	if (!trigger) throw new N8nHarnessError(`workflow ${workflowId} has no Manual Trigger to run from`);
	// 1.x runs the workflow it is sent; 2.x reads it from its database and refuses extra fields.
	const body = server.ctx.major >= 2 ? { triggerToStartFrom: { name: trigger.name } } : { workflowData: workflow, triggerToStartFrom: { name: trigger.name } };
	let executionId = '';
	let execution: Execution | undefined;
	for (let attempt = 1; !execution; attempt++) {
		const again = async (failure: unknown) => {
			if (attempt >= 5 || !refusedByIdCheck(failure)) return false;
			await sleep(2_000);
			return true;
		};
		let answer: { executionId?: string } | undefined;
		try {
			answer = await server.rest('POST', `/workflows/${workflowId}/run`, body);
		} catch (error) {
			if (await again(error)) continue;
			throw error;
		}
		if (!answer?.executionId) throw new N8nHarnessError(`n8n started no run of workflow ${workflowId}: ${JSON.stringify(answer)}`, server.logTail(40));
		executionId = answer.executionId;
		const ended = await waitFor(
			`manual run ${executionId} of workflow ${workflowId} to end`,
			async () => {
				const current = await server.getExecution(executionId);
				return isFinished(current) && current.data ? current : undefined;
			},
			{ timeoutMs: options.timeoutMs ?? 3 * 60_000, intervalMs: 250, onTimeout: () => server.logTail(60) },
		);
		if (!(ended.status === 'error' && (await again(ended.data)))) execution = ended;
	}
	const run = execution as unknown as WorkflowRun;
	const runError = run.data?.resultData?.error;
	const ok = execution.status === 'success' && !runError;
	const errorMessage = ok ? undefined : runError ? [runError.message, runError.description].filter(Boolean).join(': ') : `the run ended ${execution.status}`;
	if (!ok && !options.allowFailure) throw new N8nHarnessError(`workflow ${workflowId} failed: ${errorMessage}`, server.logTail(60));
	return {
		executionId,
		ok,
		exitCode: ok ? 0 : 1,
		run,
		errorMessage,
		crashedOnExit: false,
		stdout: '',
		logFile: server.logFile,
		durationMs: Date.now() - started,
	};
}
