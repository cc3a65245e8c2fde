/**
 * The package under n8n 3's announced defaults, on n8n 2.41 in queue mode (PostgreSQL,
 * Redis, one main, one worker): manual executions run on workers
 * (`OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS`, which n8n 3 makes the only way), and poll
 * triggers are scheduled by n8n's durable scheduler with durable cursors
 * (`N8N_POLLER_DURABLE_CURSORS_ENABLED` with the flags it needs: the scheduler, its poll
 * triggers, the workflow publication service).
 *
 * - A manual run of the Clinic node (the editor's "Execute workflow") runs on the worker.
 * - The Clinic Event Log Trigger's Fetch Test Event runs on the worker and gives the newest event.
 * - The Clinic Trigger's test listening subscribes the test address, a delivery there runs on
 *   the worker, and the test subscription is removed afterwards. As n8n's docs ask of a
 *   queue-mode setup, /webhook-test/ reaches the main (harness/queue.ts's balancer).
 * - The Event Log Trigger, active with durable cursors, runs each new event after its first
 *   scheduled poll exactly once, counted after the next poll.
 */
import type { Simulator } from '../simulator';
import {
	isFinished,
	N8N_VERSIONS,
	nodeJson,
	runManually,
	waitFor,
	type Execution,
	type QueueCluster,
	type WorkflowImport,
} from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { EVERY_MINUTE, eventLogReadsSettled, eventLogRuns, eventLogWorkflow, idsPerRun, lastEventLogRead } from './support/eventLog';
import { byId, chain, clinicNode, clinicTriggerWorkflow, manualTrigger } from './support/workflows';

const MANUAL_TRIGGER = "When clicking 'Execute workflow'";
const CLINIC = 'Get a consultation';
const EVENT_LOG_TRIGGER = 'Clinic Event Log Trigger';
const CLINIC_TRIGGER = 'Clinic Trigger';
/** n8n 3's defaults, as far as n8n 2.41 has them behind flags. */
const N8N3_ENV = {
	OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
	N8N_SCHEDULER_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
	N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'true',
};

function manualClinicWorkflow(): WorkflowImport {
	return chain('Manual: get a consultation', [
		manualTrigger(MANUAL_TRIGGER),
		clinicNode(CLINIC, { resource: 'consultation', operation: 'get', consultationId: byId(1) }),
	]);
}

function listeningTriggerWorkflow(): WorkflowImport {
	return clinicTriggerWorkflow({ name: 'Patient updated (test listening)', webhookId: '7a4e2c1d-5b6f-4e8a-9c0d-2e3f4a5b6c7d', nodeId: 'clinic-trigger', nodeName: CLINIC_TRIGGER });
}

describe(`n8n 3 defaults on n8n ${N8N_VERSIONS.v2} in queue mode: manual runs on a worker, durable poll cursors`, () => {
	let sim: Simulator;
	let cluster: QueueCluster;
	let manualId: string;
	let eventLogId: string;
	let triggerId: string;

	const clinic = useClinicN8n({
		version: N8N_VERSIONS.v2,
		label: 'n8n3',
		env: N8N3_ENV,
		simulator: { allowHttpCallbacks: true, deliveryRetryDelayMs: 100 },
		queue: { workers: 1, webhookProcessors: 0, concurrency: 5 },
		workflows: () => [
			manualClinicWorkflow(),
			eventLogWorkflow({ name: 'Finished consultations (durable cursor)', nodeName: EVENT_LOG_TRIGGER, pollTimes: EVERY_MINUTE }),
			listeningTriggerWorkflow(),
		],
	});
	const { n8n } = clinic;
	beforeAll(() => {
		sim = clinic.sim;
		[manualId, eventLogId, triggerId] = clinic.workflowIds;
		cluster = clinic.cluster;
	});

	/** The editor's run request; answers n8n's reply ({executionId} or {waitingForWebhook}). */
	async function requestRun(workflowId: string, trigger: string): Promise<{ executionId?: string; waitingForWebhook?: boolean }> {
		return await cluster.main.rest('POST', `/workflows/${workflowId}/run`, { triggerToStartFrom: { name: trigger } });
	}

	async function finishedExecution(id: string): Promise<Execution> {
		// The status n8n answered last: a timeout then tells a slow run from a lost one.
		let lastSeen = 'no answer yet';
		return await waitFor(
			`execution ${id} to finish`,
			async () => {
				const execution = await cluster.main.getExecution(id);
				lastSeen = execution.status;
				return isFinished(execution) && execution.data ? execution : undefined;
			},
			{ timeoutMs: 90_000, intervalMs: 300, onTimeout: () => `n8n last answered it ${lastSeen}\n${cluster.logTails()}` },
		);
	}

	it(
		"a manual run of the Clinic node runs on the worker and gets the consultation",
		n8n.run(async () => {
			// The harness asks again when the worker refused the run at n8n's 250 ms check of fixed IDs (harness/manualRun.ts).
			const { executionId, run } = await runManually(cluster.main, manualId);
			const execution = run as unknown as Execution;
			expect(execution.status).toBe('success');
			expect(execution.mode).toBe('manual');
			expect(nodeJson(execution, CLINIC)).toEqual([expect.objectContaining({ id: 1 })]);
			expect(cluster.workerOf(executionId)).toBe(0);
		}),
		5 * 60_000,
	);

	it(
		"the Event Log Trigger's Fetch Test Event runs on the worker and gives the newest event",
		n8n.run(async () => {
			const newest = await sim.emit('consultation', 'consultation-finished', { id: 901 });
			const { executionId } = await requestRun(eventLogId, EVENT_LOG_TRIGGER);
			expect(executionId).toBeDefined();
			const execution = await finishedExecution(executionId!);
			expect(execution.status).toBe('success');
			expect(nodeJson(execution, EVENT_LOG_TRIGGER)).toEqual([expect.objectContaining({ eventId: newest.id, value: { id: 901 } })]);
			expect(cluster.workerOf(executionId!)).toBe(0);
		}),
		5 * 60_000,
	);

	it(
		"the Clinic Trigger's test listening subscribes the test address, runs a delivery on the worker, and unsubscribes",
		n8n.run(async () => {
			const answer = await requestRun(triggerId, CLINIC_TRIGGER);
			expect(answer).toEqual(expect.objectContaining({ waitingForWebhook: true }));
			const testSubscriptions = () => sim.subscriptions().filter((s) => s.deleted_at === null && s.url.includes('/webhook-test/'));
			await waitFor('the test subscription', async () => (testSubscriptions().length === 1 ? true : undefined), { timeoutMs: 30_000 });

			const record = await sim.emit('patient', 'patient-updated', { id: 5, first_name: 'Elena' });
			const [execution] = await cluster.main.waitForExecutions(triggerId, 1, { timeoutMs: 90_000 });
			expect(execution.status).toBe('success');
			expect(execution.mode).toBe('manual');
			expect(nodeJson(execution, CLINIC_TRIGGER)).toEqual([expect.objectContaining({ eventId: record.id, value: { id: 5, first_name: 'Elena' } })]);
			expect(cluster.workerOf(execution.id)).toBe(0);
			// One delivery ends test listening: n8n removes the test webhook, and the trigger its subscription.
			await waitFor('the test subscription removed', async () => (testSubscriptions().length === 0 ? true : undefined), { timeoutMs: 30_000 });
		}),
		5 * 60_000,
	);

	// n8n's durable poll cursors keep nothing of the poll made at activation (n8n runs it as a
	// test and commits no cursor): "From Now" starts at the first scheduled poll, as the README
	// says. The events here come after that poll.
	it(
		'the Event Log Trigger, active with durable cursors, runs each new event exactly once',
		n8n.run(async () => {
			const before = idsPerRun(await cluster.main.listExecutions(eventLogId), EVENT_LOG_TRIGGER).flat().length;
			const firstRead = lastEventLogRead(sim);
			await cluster.main.activateWorkflow(eventLogId);
			// The activation's poll reads the log; the first scheduled poll takes the log's place.
			await waitFor('the poll at activation', async () => (lastEventLogRead(sim) > firstRead ? true : undefined), { timeoutMs: 90_000 });
			const activationRead = await eventLogReadsSettled(sim);
			await waitFor('the first scheduled poll', async () => (lastEventLogRead(sim) > activationRead ? true : undefined), { timeoutMs: 150_000 });
			await eventLogReadsSettled(sim);
			const ids: number[] = [];
			for (let i = 0; i < 3; i++) ids.push((await sim.emit('consultation', 'consultation-finished', { id: 910 + i })).id);
			// Counted after one more poll: a repeat would have started a run by then.
			const runs = (
				await eventLogRuns(sim, cluster.main, eventLogId, before + ids.length, { nextPoll: true, triggerNode: EVENT_LOG_TRIGGER })
			).filter((execution) => execution.mode === 'trigger');
			expect(idsPerRun(runs, EVENT_LOG_TRIGGER).flat()).toEqual(ids);
			expect(runs.every((e) => e.status === 'success')).toBe(true);
			await cluster.main.deactivateWorkflow(eventLogId);
		}),
		5 * 60_000,
	);
});
