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
 * run (webhook-helpers.ts, `shouldDeferOnReceivedResponse`): a run it refused leaves the
 * cursor behind its events, which run with a later delivery. n8n 1.x answers and writes
 * before it stores the run, as for every webhook.
 *
 * In one process, deliveries arriving together share one read: one that comes while a read
 * is under way waits for the next, and of the deliveries a read answers, the first still
 * waiting runs what it found. What a run took is read on from here for TAKEN_HELD_MS, while
 * n8n writes its cursor; after that only what n8n saved counts.
 */
import { sleep } from 'n8n-workflow';

import type { EventFilter, EventRecord } from '../shared/eventRecord';
import type { Cursor } from '../shared/eventCursor';
import { mergeCursors, poll } from '../shared/eventCursor';
import type { EventLog } from '../shared/eventLog';
import { Kept } from './memory';
import { keptInProcess } from '../../credentials/ClinicProcessMemory';

/** Most events one delivery runs; the rest run with the next one. */
export const MAX_EVENTS_PER_RUN = 1000;
/** How long this process reads on from a run's cursor that n8n's database may not show yet. */
export const TAKEN_HELD_MS = 30_000;

export interface NewEvents {
	/** Oldest first; empty when another delivery runs them, or nothing is new. */
	events: EventRecord[];
	/** The cursor once they ran: for the node's static data. */
	cursor: Cursor;
}

interface Waiter {
	resolve: (found: NewEvents) => void;
	reject: (error: Error) => void;
	gone: boolean;
}

/** The deliveries waiting for one read, and what it reads with (the first one's log). */
interface Batch {
	waiters: Waiter[];
	saved: Cursor;
	log: EventLog;
	filters: EventFilter[];
}

interface TriggerReads {
	reading?: boolean;
	next?: Batch;
	taken?: { cursor: Cursor; at: number };
}

/** The one store of the trigger's reads: under way, waiting, and the last run's cursor. */
const reads = keptInProcess('event-log reads of each trigger', '1,000 triggers, 10 minutes each', new Kept<TriggerReads>(1_000, 10 * 60_000));

/**
 * The events past `saved` (the cursor n8n loaded for this delivery) that this delivery
 * runs. Rejects when the log gives no answer within `deadlineMs` (the read goes on for the
 * deliveries after it) or fails; nothing is taken then.
 */
export async function readNewEvents(trigger: string, log: EventLog, filters: EventFilter[], saved: Cursor, deadlineMs: number): Promise<NewEvents> {
	const state = reads.get(trigger) ?? {};
	reads.set(trigger, state);
	return await new Promise<NewEvents>((resolve, reject) => {
		let settled = false;
		const waiter: Waiter = {
			resolve: (found) => ((settled = true), resolve(found)),
			reject: (error) => ((settled = true), reject(error)),
			gone: false,
		};
		void sleep(deadlineMs).then(() => {
			if (settled) return;
			waiter.gone = true;
			waiter.reject(new Error(`no answer within ${deadlineMs / 1000} s`));
		});
		if (state.next) {
			state.next.waiters.push(waiter);
			state.next.saved = mergeCursors(state.next.saved, saved);
		} else {
			state.next = { waiters: [waiter], saved, log, filters };
		}
		if (!state.reading) void readNext(state);
	});
}

async function readNext(state: TriggerReads): Promise<void> {
	const batch = state.next;
	if (!batch) return;
	state.next = undefined;
	state.reading = true;
	const held = state.taken && Date.now() - state.taken.at < TAKEN_HELD_MS ? state.taken.cursor : undefined;
	const from = held ? mergeCursors(batch.saved, held) : batch.saved;
	try {
		const outcome = await poll(batch.log, batch.filters, from, MAX_EVENTS_PER_RUN);
		// Decided in one synchronous step: one delivery runs them, the others find them taken.
		const runner = batch.waiters.find((waiter) => !waiter.gone);
		if (runner && outcome.events.length > 0) state.taken = { cursor: outcome.cursor, at: Date.now() };
		for (const waiter of batch.waiters) waiter.resolve(waiter === runner ? outcome : { events: [], cursor: outcome.cursor });
	} catch (error) {
		for (const waiter of batch.waiters) waiter.reject(error as Error);
	} finally {
		state.reading = false;
		void readNext(state);
	}
}
