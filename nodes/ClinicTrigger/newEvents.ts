/**
 * What a verified delivery runs: every event of the trigger's events past its cursor in
 * the service's event log, oldest first, each with its own id. The delivery's body decides
 * nothing: it names no event id, may be a bare identifier, and two events may carry the
 * same one. So a delivery is a wake-up; a copy, a re-send or a late retry finds nothing new.
 *
 * The cursor (the Event Log Trigger's, shared/eventCursor.ts) is in the node's static data,
 * which n8n reads from its database for each delivery (live-webhooks.ts,
 * `loadWebhookExecutionData`) and writes once webhook() changed it, in the callback that
 * answers (live-webhooks.ts, `saveStaticData`). When the node lets n8n answer (responseMode
 * onReceived), n8n 2.x answers, and so writes, only after `WorkflowRunner.run` stored the
 * run (webhook-helpers.ts, `shouldDeferOnReceivedResponse`; runNewEvents.ts keeps the change
 * marked until then): a run it refused leaves the cursor behind its events, which run with
 * a later delivery. n8n 1.x answers and writes before it stores the run, as for every webhook.
 *
 * In one process, deliveries arriving together share one read: one that comes while a read
 * is under way waits for the next, and of the deliveries a read answers, the first still
 * waiting runs what it found. The deliveries after it may have loaded their static data
 * before n8n saved that run's cursor, so they read on from its cursor here: until n8n
 * answered (under load its database can take a minute to store a run); after a 2xx (n8n 2.x
 * stored the run, and writes the cursor after answering, seconds later when its database is
 * busy) for TAKEN_HELD_MS more; after a refusal, those that arrived within ANSWER_MARGIN_MS
 * of it. A delivery after that (the service's retry of a run n8n refused, say) reads on from
 * what n8n saved.
 */
import { sleep } from 'n8n-workflow';

import type { EventFilter } from '../shared/eventRecord';
import type { Cursor } from '../shared/eventCursor';
import { mergeCursors, poll } from '../shared/eventCursor';
import type { EventLog } from '../shared/eventLog';
import { memoryOf } from './memory';
import type { NewEvents, ReadBatch, TriggerMemory } from './memory';

/** Most events one delivery runs; the rest run with the next one. */
export const MAX_EVENTS_PER_RUN = 1000;
/** How long the log has to answer a delivery's read: the delivery is answered by then, whatever the log does (the service's wait is short). */
export const EVENT_LOG_ANSWER_MS = 5000;
/** After n8n stored a run (a 2xx), how long this process reads on from its cursor, which n8n's database may not show yet. */
export const TAKEN_HELD_MS = 30_000;
/** After n8n refused a run, how late a delivery that loaded its static data before may still reach the trigger (n8n reads it, then prepares the request). */
export const ANSWER_MARGIN_MS = 5000;

type Waiter = ReadBatch['waiters'][number];

/** Whether deliveries that arrived at `arrived` may not see in n8n's database what this process took. */
function heldFor(taken: TriggerMemory['taken'], arrived: number): taken is NonNullable<TriggerMemory['taken']> {
	if (!taken) return false;
	const { answered } = taken;
	if (!answered) return true;
	return answered.stored ? Date.now() - answered.at < TAKEN_HELD_MS : arrived < answered.at + ANSWER_MARGIN_MS;
}

/**
 * The events past `saved` (the cursor n8n loaded for this delivery, which reached the
 * trigger at `arrivedAt`) that this delivery runs. Rejects when the log gives no answer
 * within EVENT_LOG_ANSWER_MS (the read goes on for the deliveries after it) or fails;
 * nothing is taken then.
 */
export async function readNewEvents(trigger: string, log: EventLog, filters: EventFilter[], saved: Cursor, arrivedAt: number): Promise<NewEvents> {
	const state = memoryOf(trigger);
	return await new Promise<NewEvents>((resolve, reject) => {
		const waiter: Waiter = { resolve, reject, gone: false };
		// Too late for this delivery (a promise settles once: nothing happens when it was answered).
		void sleep(EVENT_LOG_ANSWER_MS).then(() => {
			waiter.gone = true;
			reject(new Error(`no answer within ${EVENT_LOG_ANSWER_MS / 1000} s`));
		});
		if (state.next) {
			state.next.waiters.push(waiter);
			state.next.saved = mergeCursors(state.next.saved, saved);
			state.next.arrived = Math.min(state.next.arrived, arrivedAt);
		} else {
			state.next = { waiters: [waiter], arrived: arrivedAt, saved, log, filters };
		}
		if (!state.reading) void readNext(state);
	});
}

async function readNext(state: TriggerMemory): Promise<void> {
	const batch = state.next;
	if (!batch) return;
	state.next = undefined;
	state.reading = true;
	const from = heldFor(state.taken, batch.arrived) ? mergeCursors(batch.saved, state.taken.cursor) : batch.saved;
	try {
		const outcome = await poll(batch.log, batch.filters, from, MAX_EVENTS_PER_RUN);
		// Decided in one synchronous step: one delivery runs them, the others find them taken.
		const runner = batch.waiters.find((waiter) => !waiter.gone);
		let answered: NewEvents['answered'];
		if (runner && outcome.events.length > 0) {
			const taken: NonNullable<TriggerMemory['taken']> = { cursor: outcome.cursor, at: Date.now() };
			state.taken = taken;
			answered = (status) => (taken.answered ??= { at: Date.now(), stored: status >= 200 && status < 300 });
		}
		for (const waiter of batch.waiters) waiter.resolve(waiter === runner ? { ...outcome, answered } : { events: [], cursor: outcome.cursor });
	} catch (error) {
		for (const waiter of batch.waiters) waiter.reject(error as Error);
	} finally {
		state.reading = false;
		void readNext(state);
	}
}
