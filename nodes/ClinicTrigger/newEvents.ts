/**
 * What a verified delivery runs: the events past the trigger's cursor in the event log,
 * oldest first, each with its `eventId` (the body names none: a delivery only wakes the
 * trigger). Each delivery reads the log itself, from the cursor in the node's static data
 * merged with the newest one n8n confirmed in this process. The events of a run n8n has not
 * answered yet are another delivery's: no read counts them, so a read never goes past a run
 * n8n has not stored, and a refused run's events run with the next delivery (the retry).
 */
import type { IDataObject, INodeExecutionData, IWebhookFunctions, Logger } from 'n8n-workflow';

import { findEvent } from '../shared/catalog';
import { cursorFromNow, isCursor, isHandled, mergeCursors, poll, settle } from '../shared/eventCursor';
import type { Cursor, PollOutcome } from '../shared/eventCursor';
import { EventLog } from '../shared/eventLog';
import { eventFilterOf, eventItemOf } from '../shared/eventRecord';
import type { EventFilter, EventRecord } from '../shared/eventRecord';
import type { ClinicClient } from '../shared/transport';
import { pathOf } from '../shared/urls';
import { keepCursorMarkedUntilAnswered } from './cursorSave';
import type { StoredSubscription } from './storage';
import type { Setup } from './subscriptions';

/** Most events one delivery runs; the rest run with the next ones. */
const MAX_EVENTS_PER_RUN = 100;
/** How soon after it arrives a delivery is answered (or its run handed to n8n): the service's wait is not documented, and may be as short as 5 s. */
export const ANSWER_WITHIN_MS = 4000;
/** The answer to a delivery that finds nothing new: a 200, so the service stops retrying. */
export const NOTHING_NEW_ANSWER = { received: true, duplicate: true };
/** The Start From setting of the trigger's cursor (the Event Log Trigger's "now"). */
const START = 'now';

/**
 * A trigger's record in this process's memory (memory.ts): the newest cursor n8n confirmed, the ids of the runs it
 * has not answered yet, and what a read that went on after its delivery was answered found (`readAhead`, from `base`).
 */
export interface LogReads {
	confirmed?: Cursor;
	taken?: Set<number>;
	reportedBehind?: boolean;
	readingAhead?: boolean;
	readAhead?: { base: Cursor; outcome: PollOutcome };
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

/**
 * The trigger's cursor from now: where activation starts it. `updatedFrom` (the trigger's
 * address), for a trigger activated by a version without cursors: the service's delivery log
 * is the evidence. Events answered 2xx there ran; so did those never delivered there that are
 * older than the first one that was (logged before the subscription); the others run now.
 * Static data without a cursor is the same case (a first delivery before any activation).
 */
export async function startingCursor(log: EventLog, filters: EventFilter[], updatedFrom?: string): Promise<Cursor> {
	if (updatedFrom === undefined) return await cursorFromNow(log, filters, START);
	const triesHere = (event: EventRecord) => (event.logs ?? []).filter((entry) => pathOf(String(entry.target_url ?? '')) === pathOf(updatedFrom));
	const ranHere = (event: EventRecord) => triesHere(event).some((entry) => Number(entry.response_code) >= 200 && Number(entry.response_code) < 300);
	return await cursorFromNow(log, filters, START, (newest) => {
		// Nothing delivered there yet: the newest event is what this first delivery brings.
		const delivered = newest.filter((event) => triesHere(event).length > 0);
		const firstDelivered = delivered.length > 0 ? Math.min(...delivered.map((event) => event.id)) : Math.max(...newest.map((event) => event.id));
		return newest.filter((event) => ranHere(event) || (triesHere(event).length === 0 && event.id < firstDelivered)).map((event) => event.id);
	});
}

/** The delivery's items; undefined once answered here: nothing new (200), or the log not read in time (503, nothing runs). */
export async function runNewEvents(run: DeliveryRun): Promise<INodeExecutionData[] | undefined> {
	const { response, staticData, memory } = run;
	const log = new EventLog(run.node, run.client);
	const answerBy = run.arrived + ANSWER_WITHIN_MS;
	let events: EventRecord[];
	let cursor: Cursor;
	try {
		const filters = await triggerFilters(run.keys, run.stored, run.client);
		const saved = await cursorToReadFrom(run, log, filters);
		// A read that cannot finish in time goes on (one at a time): the next delivery runs what it found.
		let readOver = false;
		// What such a read found runs first; this delivery reads on from after it (its own event may be newer).
		const ahead = takeReadAhead(memory, saved);
		const from = ahead?.cursor ?? saved;
		const readOn = (outcome?: PollOutcome) => {
			readOver = true;
			memory.readingAhead = false;
			if (outcome) memory.readAhead = { base: from, outcome };
		};
		const readsOn = !memory.readingAhead;
		// The events of runs n8n has not answered yet in this process are another delivery's: not read as new.
		const skip = (id: number) => !!memory.taken?.has(id);
		const fresh = await poll(log, filters, from, MAX_EVENTS_PER_RUN, { until: answerBy, pageTries: 3, skip, readOn: readsOn ? readOn : undefined });
		if (readsOn && !fresh.complete && !readOver) memory.readingAhead = true;
		const read = ahead ? { ...fresh, events: [...ahead.events, ...fresh.events] } : fresh;
		// Events another delivery took meanwhile: all of them, a copy (nothing new, nothing saved); some, the retry reads again.
		const takenMeanwhile = read.events.filter((event) => skip(event.id)).length;
		if (takenMeanwhile > 0 && takenMeanwhile === read.events.length) {
			response.status(200).json(NOTHING_NEW_ANSWER);
			return undefined;
		}
		if (takenMeanwhile > 0) throw new Error('another delivery took some of these events meanwhile');
		cursor = memory.confirmed ? mergeCursors(read.cursor, memory.confirmed) : read.cursor;
		events = read.events.filter((event) => !memory.confirmed || !isHandled(memory.confirmed, event.id));
		if (events.length === 0 && !read.complete) throw new Error(`no answer within ${ANSWER_WITHIN_MS / 1000} s`);
	} catch (error) {
		run.logger.warn(`Clinic Trigger "${run.node.name}": the event log could not be read (${(error as Error).message}); nothing ran, the service's retry or the next delivery runs its events`);
		response.status(503).set('Retry-After', '5').json({ error: 'The event log could not be read: try again' });
		return undefined;
	}
	if (events.length === 0) {
		if (JSON.stringify(staticData.cursor) !== JSON.stringify(cursor)) staticData.cursor = cursor;
		memory.confirmed = cursor;
		response.status(200).json(NOTHING_NEW_ANSWER);
		return undefined;
	}
	const taken = (memory.taken ??= new Set());
	for (const event of events) taken.add(event.id);
	void keepCursorMarkedUntilAnswered(run, cursor).then((stored) => {
		if (stored) memory.confirmed = memory.confirmed ? mergeCursors(cursor, memory.confirmed) : cursor;
		for (const event of events) taken.delete(event.id);
	});
	const receivedAt = new Date().toISOString();
	return events.map((event) => ({ json: eventItemOf(event, { receivedAt }) }));
}

/** The cursor to read from: the saved one (or, updated from a version without cursors, one from the delivery log) merged with the newest this process confirmed. */
async function cursorToReadFrom(run: DeliveryRun, log: EventLog, filters: EventFilter[]): Promise<Cursor> {
	const saved = isCursor(run.staticData.cursor) ? run.staticData.cursor : await startingCursor(log, filters, run.webhookUrl);
	const { confirmed } = run.memory;
	if (!confirmed) return saved;
	const merged = mergeCursors(saved, confirmed);
	const settled = settle(saved.floor, saved.seen);
	const behind = merged.floor > settled.floor || merged.seen.some(([id]) => !isHandled({ ...saved, ...settled }, id));
	if (behind && !run.memory.reportedBehind) {
		run.memory.reportedBehind = true;
		run.logger.warn(
			`Clinic Trigger "${run.node.name}": the cursor n8n saved is behind the events this n8n process ran. Another node in this workflow (a polling trigger such as the Clinic Event Log Trigger, or a second Clinic Trigger) saved an older copy of the workflow's static data, another n8n process did, or n8n did not save the cursor with a run. Those events do not run again while this process runs; keep the Clinic Trigger alone in its workflow.`,
		);
	}
	return merged;
}

/**
 * What an earlier read that went on found, for a delivery from `saved`: its events `saved` does not count as
 * handled (every one up to where it read, as long as `saved` handles all its base did). Taken once.
 */
function takeReadAhead(memory: LogReads, saved: Cursor): PollOutcome | undefined {
	const ahead = memory.readAhead;
	memory.readAhead = undefined;
	if (!ahead || ahead.base.floor > saved.floor || ahead.base.seen.some(([id]) => !isHandled(saved, id))) return undefined;
	const events = ahead.outcome.events.filter((event) => !isHandled(saved, event.id));
	if (events.some((event) => memory.taken?.has(event.id))) return undefined;
	return events.length > 0 ? { events, cursor: mergeCursors(ahead.outcome.cursor, saved), complete: true } : undefined;
}
