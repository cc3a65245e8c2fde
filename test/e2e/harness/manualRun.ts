/**
 * A workflow run as the editor's "Execute workflow" runs it, in an n8n that is already
 * running: `POST /rest/workflows/:id/run` from its Manual Trigger, then the stored execution.
 * One n8n process serves every run of a test file, where `n8n execute` (cli.ts) starts a
 * whole n8n per run: on a machine of two cores that is where an end-to-end run's time went.
 */
import { N8nHarnessError } from './context';
import type { ExecuteResult, WorkflowImport, WorkflowRun } from './cli';
import { isFinished } from './executions';
import type { N8nServer } from './server';
import { waitFor } from './waitFor';

const MANUAL_TRIGGER = 'n8n-nodes-base.manualTrigger';
/** n8n's own check of fixed record IDs, which gives up after 250 ms of wall-clock time. */
const REGEX_TIMED_OUT = 'Regular expression execution timed out';

/**
 * The run request. n8n checks every fixed resource-locator ID against its pattern before a
 * run starts, within 250 ms of wall-clock time (docs/requests-limits-and-faults.md); on a
 * machine whose cores the suite itself keeps busy that check can time out, and n8n refuses
 * the run before anything is sent. Nothing ran then, so the request is made again.
 */
async function startRun(server: N8nServer, workflowId: string, body: unknown): Promise<{ executionId?: string; waitingForWebhook?: boolean }> {
	for (let attempt = 1; ; attempt++) {
		try {
			return await server.rest('POST', `/workflows/${workflowId}/run`, body);
		} catch (error) {
			if (attempt >= 5 || !(error as Error).message.includes(REGEX_TIMED_OUT)) throw error;
			await new Promise((resolve) => setTimeout(resolve, 2_000));
		}
	}
}

/**
 * Runs the workflow from its Manual Trigger and waits until the execution has ended. The
 * result has the shape of `executeWorkflow`'s; throws on a failed run unless `allowFailure`.
 */
export async function runManually(
	server: N8nServer,
	workflowId: string,
	options: { allowFailure?: boolean; timeoutMs?: number } = {},
): Promise<ExecuteResult> {
	const started = Date.now();
	const workflow = await server.rest<WorkflowImport>('GET', `/workflows/${workflowId}`);
	const trigger = workflow.nodes.find((node) => node.type === MANUAL_TRIGGER);
	if (!trigger) throw new N8nHarnessError(`workflow ${workflowId} has no Manual Trigger to run from`);
	// 1.x runs the workflow it is sent; 2.x reads it from its database and refuses extra fields.
	const body = server.ctx.major >= 2 ? { triggerToStartFrom: { name: trigger.name } } : { workflowData: workflow, triggerToStartFrom: { name: trigger.name } };
	const answer = await startRun(server, workflowId, body);
	if (!answer?.executionId) throw new N8nHarnessError(`n8n started no run of workflow ${workflowId}: ${JSON.stringify(answer)}`, server.logTail(40));
	const execution = await waitFor(
		`manual run ${answer.executionId} of workflow ${workflowId} to end`,
		async () => {
			const current = await server.getExecution(answer.executionId!);
			return isFinished(current) && current.data ? current : undefined;
		},
		{ timeoutMs: options.timeoutMs ?? 3 * 60_000, intervalMs: 250, onTimeout: () => server.logTail(60) },
	);
	const run = execution as unknown as WorkflowRun;
	const runError = run.data?.resultData?.error;
	const ok = execution.status === 'success' && !runError;
	const errorMessage = ok ? undefined : runError ? [runError.message, runError.description].filter(Boolean).join(': ') : `the run ended ${execution.status}`;
	if (!ok && !options.allowFailure) throw new N8nHarnessError(`workflow ${workflowId} failed: ${errorMessage}`, server.logTail(60));
	return {
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
