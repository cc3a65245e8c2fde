/**
 * What a verified delivery runs: the events past the trigger's cursor in the event log,
 * oldest first, each with its `eventId` (the body names none: a delivery only wakes the
 * trigger). The cursor is in the node's static data, which n8n saves as it answers: n8n 2.x
 * answers a run only once it stored it (webhook-helpers.ts, `shouldDeferOnReceivedResponse`),
 * 1.x before. Deliveries arriving together in one process share one read; the first still
 * waiting runs what it found, and later ones, whose static data may be older, read on from
 * its cursor until n8n answered, TAKEN_HELD_MS after a 2xx, or ANSWER_MARGIN_MS after a refusal.
 */
import { sleep } from 'n8n-workflow';
import type { IDataObject, INodeExecutionData, IWebhookFunctions, Logger } from 'n8n-workflow';

import { findEvent } from '../shared/catalog';
import { cursorFromNow, isCursor, mergeCursors, poll } from '../shared/eventCursor';
import type { Cursor } from '../shared/eventCursor';
import { EventLog } from '../shared/eventLog';
import { eventFilterOf, eventItemOf } from '../shared/eventRecord';
import type { EventFilter, EventRecord } from '../shared/eventRecord';
import type { ClinicClient } from '../shared/transport';
import { pathOf } from '../shared/urls';
import type { StoredSubscription } from './storage';
import type { Setup } from './subscriptions';

/** Most events one delivery runs; the rest run with the next one. */
const MAX_EVENTS_PER_RUN = 1000;
/** How long the log has to answer a delivery's read: the delivery is answered by then. */
export const EVENT_LOG_ANSWER_MS = 5000;
/** After n8n stored a run (a 2xx), how long this process reads on from its cursor. */
export const TAKEN_HELD_MS = 30_000;
/** After n8n refused a run, how late a delivery that loaded its static data before may still arrive. */
export const ANSWER_MARGIN_MS = 5000;
/** The longest n8n may take to answer a run: the cursor is kept marked that long at most. */
export const ANSWER_WAIT_MS = 10 * 60_000;
/** The answer to a delivery that finds nothing new: a 200, so the service stops retrying. */
export const NOTHING_NEW_ANSWER = { received: true, duplicate: true };
/** A trigger activated before cursors existed starts from now, but runs what was logged this long before. */
const UPDATE_CATCH_UP_MS = 60_000;
/** The Start From setting of the trigger's cursor (the Event Log Trigger's "now"). */
const START = 'now';

/** What a read found for one delivery: events oldest first (none when another delivery runs them), the cursor after them, and what to call once n8n answered the run. */
type NewEvents = { events: EventRecord[]; cursor: Cursor; answered?: (status: number) => void };
/** A delivery waiting for a read: `gone` once its deadline passed; `settled` ends the deadline's timer. */
type Waiter = { resolve: (found: NewEvents) => void; reject: (error: Error) => void; gone: boolean; settled: AbortController };
/** The deliveries waiting for one read, from when the first arrived, and what it reads with. */
type ReadBatch = { waiters: Waiter[]; arrived: number; saved: Cursor; log: EventLog; filters: EventFilter[] };

/** A trigger's reads of the log, in its memory (memory.ts): one under way, the next batch, and the last run's cursor until n8n stored it. */
export interface LogReads {
	reading?: boolean;
	next?: ReadBatch;
	taken?: { cursor: Cursor; at: number; answered?: { at: number; stored: boolean } };
}

/** What a delivery read from n8n that its run needs: `client` is the delivery's own (short timeouts), `arrived` when webhook() was called. */
export interface DeliveryRun extends Setup {
	client: ClinicClient;
	logger: Logger;
	memory: LogReads;
	stored: Map<string, StoredSubscription>;
	response: ReturnType<IWebhookFunctions['getResponseObject']>;
	arrived: number;
}

/** Whether the trigger runs the log's events (Duplicate Check Event Log), not each delivery's body. */
export function readsEventLog(options: IDataObject): boolean {
	return options.duplicateCheck !== 'off' && options.duplicateCheck !== 'sameBody';
}

/** The log's filters for the trigger's events: their topics as subscribed, else from the credential. */
export async function triggerFilters(keys: string[], stored: Map<string, StoredSubscription>, client: ClinicClient): Promise<EventFilter[]> {
	let prefix: string | undefined;
	const filters: EventFilter[] = [];
	for (const event of keys.map(findEvent)) {
		const topic = event && stored.get(event.key)?.topic;
		if (event) filters.push(topic ? { topic, name: event.name } : eventFilterOf(event, (prefix ??= (await client.integrationSettings()).topicPrefix)));
	}
	return filters;
}

/** The trigger's cursor from now: where activation starts it. */
export const startingCursor = async (log: EventLog, filters: EventFilter[]): Promise<Cursor> => await cursorFromNow(log, filters, START);

/** The delivery's items; undefined once answered here: nothing new (200), or the log not read in time (503, nothing runs). */
export async function runNewEvents(run: DeliveryRun): Promise<INodeExecutionData[] | undefined> {
	const { response, staticData } = run;
	const log = new EventLog(run.node, run.client);
	let found: NewEvents;
	try {
		const filters = await triggerFilters(run.keys, run.stored, run.client);
		const saved = isCursor(staticData.cursor) ? staticData.cursor : await cursorAfterUpdate(log, filters, run.webhookUrl);
		found = await readNewEvents(run.memory, log, filters, saved, run.arrived);
	} catch (error) {
		run.logger.warn(`Clinic Trigger "${run.node.name}": the event log could not be read (${(error as Error).message}); nothing ran, the service's retry or the next delivery runs its events`);
		response.status(503).set('Retry-After', '5').json({ error: 'The event log could not be read: try again' });
		return undefined;
	}
	if (found.events.length === 0) {
		response.status(200).json(NOTHING_NEW_ANSWER);
		return undefined;
	}
	keepCursorMarked(response, staticData, found);
	const receivedAt = new Date().toISOString();
	return found.events.map((event) => ({ json: eventItemOf(event, { receivedAt }) }));
}

/** Activated by a version without cursors: from now, but for what was logged in the minute before and got no 2xx at this trigger's address (the service's delivery log). */
async function cursorAfterUpdate(log: EventLog, filters: EventFilter[], webhookUrl: string): Promise<Cursor> {
	const since = Date.now() - UPDATE_CATCH_UP_MS;
	const ranHere = (event: EventRecord) =>
		(event.logs ?? []).some((entry) => pathOf(String(entry.target_url ?? '')) === pathOf(webhookUrl) && typeof entry.response_code === 'number' && entry.response_code >= 200 && entry.response_code < 300);
	return await cursorFromNow(log, filters, START, (event) => !(Date.parse(event.created_at) >= since) || ranHere(event));
}

/** Sets the run's cursor in the static data, and again until n8n answered: on the way n8n 2.41 wraps the static data again (workflow-runner.ts, `establishContextForPersistence`), which clears its changed mark; set after that, the cursor is saved with the run, and not when n8n refused it. */
function keepCursorMarked(response: DeliveryRun['response'], staticData: IDataObject, found: NewEvents): void {
	staticData.cursor = found.cursor;
	let answered = false;
	const onAnswered = () => {
		answered = true;
		// A connection closed before any answer went out: n8n stored nothing for it.
		found.answered?.(response.writableFinished ? response.statusCode : 0);
	};
	response.once('finish', onAnswered);
	response.once('close', onAnswered);
	void (async () => {
		for (const started = Date.now(); !answered && Date.now() - started < ANSWER_WAIT_MS; ) {
			await sleep(1);
			if (!answered) staticData.cursor = found.cursor;
		}
	})();
}

/** The events past `saved` that this delivery runs; rejects when the log fails or gives no answer within EVENT_LOG_ANSWER_MS (the read goes on for the others). */
async function readNewEvents(state: LogReads, log: EventLog, filters: EventFilter[], saved: Cursor, arrived: number): Promise<NewEvents> {
	return await new Promise<NewEvents>((resolve, reject) => {
		const waiter: Waiter = { resolve, reject, gone: false, settled: new AbortController() };
		// n8n 1.x's sleep takes no signal: its timer runs out and does nothing.
		void sleep(EVENT_LOG_ANSWER_MS, waiter.settled.signal).then(
			() => {
				if (waiter.settled.signal.aborted) return;
				waiter.gone = true;
				reject(new Error(`no answer within ${EVENT_LOG_ANSWER_MS / 1000} s`));
			},
			() => undefined,
		);
		if (state.next) {
			state.next.waiters.push(waiter);
			state.next.saved = mergeCursors(state.next.saved, saved);
			state.next.arrived = Math.min(state.next.arrived, arrived);
		} else {
			state.next = { waiters: [waiter], arrived, saved, log, filters };
		}
		if (!state.reading) void readNext(state);
	});
}

async function readNext(state: LogReads): Promise<void> {
	const batch = state.next;
	if (!batch) return;
	state.next = undefined;
	state.reading = true;
	const { taken } = state;
	// Whether these deliveries may not see in n8n's database what this process took.
	const held = taken && (!taken.answered || (taken.answered.stored ? Date.now() - taken.answered.at < TAKEN_HELD_MS : batch.arrived < taken.answered.at + ANSWER_MARGIN_MS));
	try {
		const outcome = await poll(batch.log, batch.filters, held ? mergeCursors(batch.saved, taken.cursor) : batch.saved, MAX_EVENTS_PER_RUN);
		// Decided in one synchronous step: one delivery runs them, the others find them taken.
		const runner = batch.waiters.find((waiter) => !waiter.gone);
		let answered: NewEvents['answered'];
		if (runner && outcome.events.length > 0) {
			const next: NonNullable<LogReads['taken']> = { cursor: outcome.cursor, at: Date.now() };
			state.taken = next;
			answered = (status) => (next.answered ??= { at: Date.now(), stored: status >= 200 && status < 300 });
		}
		for (const waiter of batch.waiters) waiter.resolve(waiter === runner ? { ...outcome, answered } : { events: [], cursor: outcome.cursor });
	} catch (error) {
		for (const waiter of batch.waiters) waiter.reject(error as Error);
	} finally {
		for (const waiter of batch.waiters) waiter.settled.abort();
		state.reading = false;
		void readNext(state);
	}
}
