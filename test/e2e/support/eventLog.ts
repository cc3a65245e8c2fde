/** The workflow the Event Log Trigger e2e tests activate (single main and queue mode alike), and counting its runs. */
import type { IDataObject } from 'n8n-workflow';

import type { Simulator } from '../../simulator';
import { isFinished, nodeJson, nodesThatRan, waitFor, type Execution, type N8nServer, type WorkflowImport } from '../harness';
import { DEMO_CREDENTIAL_IDS } from './examples';

/** The trigger node's name, to read what it emitted from an execution. */
export const EVENT_LOG_TRIGGER = 'Consultation Finished';

/** Polls every 10 s: six times a minute, each at its own second (n8n refuses a sub-minute cron field). */
export const EVERY_TEN_SECONDS = { item: [0, 10, 20, 30, 40, 50].map((second) => ({ mode: 'custom', cronExpression: `${second} * * * * *` })) };

/** n8n's shortest preset, as a user picks it in the editor. */
export const EVERY_MINUTE = { item: [{ mode: 'everyMinute' }] };

/**
 * The Clinic Event Log Trigger alone, for finished consultations with the examples' Clinic
 * API credential (`simulatorCredentials`). It polls every 10 s unless `pollTimes` says
 * otherwise: each exact count waits for one more poll, so the interval sets the tests' pace.
 */
export function eventLogWorkflow(
	options: { name?: string; nodeName?: string; pollTimes?: IDataObject; nodeOptions?: IDataObject } = {},
): WorkflowImport {
	return {
		name: options.name ?? 'Finished consultations from the event log',
		nodes: [
			{
				id: 'event-log-trigger',
				name: options.nodeName ?? EVENT_LOG_TRIGGER,
				type: 'n8n-nodes-clinic.clinicEventLogTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {
					pollTimes: options.pollTimes ?? EVERY_TEN_SECONDS,
					authentication: 'clinicApi',
					events: ['consultation:consultation-finished'],
					...(options.nodeOptions ? { options: options.nodeOptions } : {}),
				},
				credentials: { clinicApi: { id: DEMO_CREDENTIAL_IDS.clinicApi, name: 'Clinic API (simulator)' } },
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}

/**
 * A run still going: its status says so and its trigger node has not run yet. The workflow is
 * the trigger alone, so the trigger's output is the run's whole outcome. (n8n 1.123 in queue
 * mode can leave a poll's run `running` for good when the worker finishes it before the main
 * starts waiting on the job: the outcome is stored, the status never updated.)
 */
const going = (execution: Execution, triggerNode: string) =>
	!isFinished(execution) && !nodesThatRan(execution).includes(triggerNode);

/** Sequence number of the newest read of the event log (GET /events) the service answered with a page, 0 before any. */
export function lastEventLogRead(sim: Simulator): number {
	let newest = 0;
	for (const entry of sim.log) {
		if (entry.host === 'webhooks' && entry.method === 'GET' && entry.path === '/events' && entry.status >= 200 && entry.status < 300) {
			newest = entry.seq;
		}
	}
	return newest;
}

/**
 * Waits until the event log has not been read for `quietMs` (a poll's pages are read one
 * after the other; polls here are a minute apart) and answers the last read. A poll is
 * told over by this quiet, not by a fixed sleep after its first page, which a busy
 * machine can outlast.
 */
export async function eventLogReadsSettled(sim: Simulator, quietMs = 5_000, timeoutMs = 120_000): Promise<number> {
	let last = lastEventLogRead(sim);
	let since = Date.now();
	return await waitFor(
		`no read of the event log for ${quietMs / 1000} s`,
		async () => {
			const now = lastEventLogRead(sim);
			if (now !== last) [last, since] = [now, Date.now()];
			return Date.now() - since >= quietMs ? last : undefined;
		},
		{ timeoutMs, intervalMs: 250 },
	);
}

/** Event ids each finished run started with, oldest run first. */
export function idsPerRun(executions: Execution[], triggerNode = EVENT_LOG_TRIGGER): number[][] {
	return [...executions]
		.filter((execution) => !going(execution, triggerNode))
		.reverse()
		.map((execution) => nodeJson(execution, triggerNode).map((json) => json.eventId as number));
}

/**
 * The finished runs of an Event Log Trigger workflow once a repeat could have shown: waits
 * until they carry at least `count` event ids with no run going, then, with `nextPoll`,
 * until the service answered a read of the log that came after those runs were stored (the
 * trigger's next poll, the one that would emit a repeat) and, on a check after that, no run
 * is going. Answers the runs, newest first, for an exact count by the caller: an event
 * taken twice shows as a repeated id, one missing as a shorter list. (A poll that reads
 * nothing new starts no run, so the read itself is the only sign that it happened; n8n
 * stores a run it starts before its next answer to the runs list after that read.)
 */
export async function eventLogRuns(
	sim: Simulator,
	server: N8nServer,
	workflowId: string,
	count: number,
	options: { nextPoll?: boolean; triggerNode?: string; timeoutMs?: number; intervalMs?: number } = {},
): Promise<Execution[]> {
	const timeoutMs = options.timeoutMs ?? 150_000;
	const intervalMs = options.intervalMs ?? 1000;
	const triggerNode = options.triggerNode ?? EVENT_LOG_TRIGGER;
	const isGoing = (execution: Execution) => going(execution, triggerNode);
	const settled = async () => {
		const runs = await server.listExecutions(workflowId);
		return runs.some(isGoing) ? undefined : runs;
	};
	let reached = true;
	let runs = await waitFor(
		`runs of workflow ${workflowId} carrying ${count} event(s)`,
		async () => {
			const done = await settled();
			return done && idsPerRun(done, triggerNode).flat().length >= count ? done : undefined;
		},
		{ timeoutMs, intervalMs },
	).catch(async () => {
		// The caller's exact comparison says what is missing.
		reached = false;
		return (await server.listExecutions(workflowId)).filter((execution) => !isGoing(execution));
	});
	if (!options.nextPoll || !reached) return runs;
	const taken = lastEventLogRead(sim);
	let readAfter = false;
	runs = await waitFor(
		`a read of the event log after the runs of workflow ${workflowId}`,
		async () => {
			// The read is seen first; the runs are read on a later check, after n8n acted on its answer.
			if (!readAfter) {
				readAfter = lastEventLogRead(sim) > taken;
				return undefined;
			}
			return await settled();
		},
		{ timeoutMs, intervalMs },
	);
	return runs;
}
