/**
 * Counting the runs an event started, exactly. "At least one run" cannot see a
 * duplicate that arrives with the service's next retry, and a count taken after a fixed
 * sleep sees it only if the retry came early enough. So a count is read only once
 *   1. the simulator says no attempt of the event's deliveries can come any more (each
 *      got a 2xx or used up its retries, by its own retry schedule), and
 *   2. n8n holds a finished run for every attempt it accepted as new (a 2xx that is not
 *      the trigger's "duplicate" answer), with no run of the workflow still going.
 * Then the caller asserts the number: one run per event, not "at least". (An attempt n8n
 * never answered may have started a run as well; it is counted if stored by then.)
 */
import { isDeepStrictEqual } from 'node:util';

import type { EventDeliveries, EventRecord, Simulator } from '../../simulator';
import { isFinished, nodeJson, nodesThatRan, queuedJson, readExecutionsWhen, type Execution, type N8nServer } from '../harness';

/** The event ids a run holds: what its trigger node output, or, in a run cut off before that node ran, the items n8n stored for it. */
export function eventIdsOf(execution: Execution, trigger: string): number[] {
	const items = nodesThatRan(execution).includes(trigger) ? nodeJson(execution, trigger) : queuedJson(execution, trigger);
	return items.map((json) => Number(json.eventId));
}

/** Whether an answer is the trigger's own to a delivery that starts nothing (`duplicate: true`). */
function answeredAsRepeat(response: string): boolean {
	try {
		return (JSON.parse(response) as { duplicate?: unknown }).duplicate === true;
	} catch {
		return false;
	}
}

/** How many of these answers n8n gave to a delivery it accepted as new (each starts a run). */
export function acceptedAsNew(answers: Array<{ status: number | null; text: string }>): number {
	return answers.filter(({ status, text }) => status !== null && status >= 200 && status < 300 && !answeredAsRepeat(text))
		.length;
}

/**
 * Waits until no run of the workflow is going and at least `accepted` finished runs are
 * picked by `isRunOf`; answers the picked runs, newest first, for an exact count.
 */
export async function storedRuns(
	server: N8nServer,
	workflowId: string,
	isRunOf: (execution: Execution) => boolean,
	accepted: number,
	timeoutMs = 90_000,
): Promise<Execution[]> {
	let picked = 0;
	return await readExecutionsWhen(server, workflowId, `${accepted} finished run(s) of workflow ${workflowId}`, {
		ready: (listed) => listed.every(isFinished),
		pick: (executions) => {
			const runs = executions.filter(isRunOf);
			picked = runs.length;
			return executions.every(isFinished) && runs.length >= accepted ? runs : undefined;
		},
		timeoutMs,
		detail: () => `${picked} of them runs of these events at the last read with data`,
	});
}

export interface SettledRuns {
	/** Finished runs of the workflow that `isRunOf` picks, newest first. */
	runs: Execution[];
	/** The event as the simulator ended it (its delivery log complete). */
	event: EventRecord;
	deliveries: EventDeliveries;
	/** Attempts n8n answered with a 2xx other than the trigger's "duplicate" answer. */
	accepted: number;
}

/**
 * Waits until the deliveries of `eventId` are over and n8n stored a run for each attempt
 * it accepted, then answers the runs `isRunOf` picks (with no run of the workflow going).
 * Only attempts to `targetUrl` count when given (an event delivered to several workflows).
 */
export async function settledRuns(
	sim: Simulator,
	server: N8nServer,
	workflowId: string,
	eventId: number,
	isRunOf: (execution: Execution) => boolean,
	options: { targetUrl?: (url: string) => boolean; timeoutMs?: number } = {},
): Promise<SettledRuns> {
	const deliveries = await sim.eventDeliveriesSettled(eventId);
	const event = sim.events().find((candidate) => candidate.id === eventId)!;
	const accepted = acceptedAsNew(
		event.logs
			.filter((log) => options.targetUrl?.(log.target_url) ?? true)
			.map((log) => ({ status: log.response_code, text: log.response })),
	);
	const runs = await storedRuns(server, workflowId, isRunOf, accepted, options.timeoutMs);
	return { runs, event, deliveries, accepted };
}

/** Picks the runs whose trigger node output this event value (an item's `value`: a run may hold several events). */
export function runsWithValue(triggerNode: string, value: unknown): (execution: Execution) => boolean {
	return (execution) => nodeJson(execution, triggerNode).some((item) => isDeepStrictEqual(item.value, value));
}

/**
 * `settledRuns` for many events of one workflow at once, with one listing of the runs
 * instead of one per event: waits until the deliveries of every event are over and n8n
 * stored a run for each attempt it accepted, then answers the finished runs of each event
 * (`eventsOf` names the events a run holds; a catch-up run may hold several).
 */
export async function settledRunsPerEvent(
	sim: Simulator,
	server: N8nServer,
	workflowId: string,
	eventIds: number[],
	eventsOf: (execution: Execution) => number[],
	options: { timeoutMs?: number } = {},
): Promise<Map<number, Execution[]>> {
	const ids = new Set(eventIds);
	let accepted = 0;
	for (const eventId of eventIds) {
		await sim.eventDeliveriesSettled(eventId);
		const event = sim.events().find((candidate) => candidate.id === eventId)!;
		accepted += acceptedAsNew(event.logs.map((log) => ({ status: log.response_code, text: log.response })));
	}
	const runs = await storedRuns(server, workflowId, (execution) => eventsOf(execution).some((id) => ids.has(id)), accepted, options.timeoutMs);
	const perEvent = new Map<number, Execution[]>(eventIds.map((id) => [id, []]));
	for (const run of runs) for (const id of new Set(eventsOf(run))) perEvent.get(id)?.push(run);
	return perEvent;
}
