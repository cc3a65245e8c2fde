/**
 * What a verified delivery runs: the events past the trigger's cursor in the event log, oldest first, each with its
 * `eventId` (a delivery only wakes the trigger). The cursor is the one in static data merged with the newest n8n
 * confirmed in this process. A run n8n has not answered yet keeps its events: no read counts them, so a refused run's
 * events run with the service's retry.
 */
import { sleep } from 'n8n-workflow';
import type { IDataObject, INodeExecutionData, IWebhookFunctions, Logger } from 'n8n-workflow';

import { findEvent } from '../shared/catalog';
import { cursorFromNow, handlesAll, savedCursor } from '../shared/eventCursor';
import type { Cursor } from '../shared/eventCursor';
import { EventLog } from '../shared/eventLog';
import { eventFilterOf, eventItemOf } from '../shared/eventRecord';
import type { EventFilter, EventRecord } from '../shared/eventRecord';
import type { ClinicClient } from '../shared/transport';
import { pathOf } from '../shared/urls';
import { shareOfNextRead, withConfirmed } from './sharedRead';
import type { LogReads, Share } from './sharedRead';
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

/** What a delivery read from n8n that its run needs: `client` is the delivery's own (short timeouts), `arrived` when webhook() was called, and then the last run n8n stored alone (its static data saved before it). */
export interface DeliveryRun extends Setup {
	client: ClinicClient;
	logger: Logger;
	memory: LogReads;
	stored: Map<string, StoredSubscription>;
	response: ReturnType<IWebhookFunctions['getResponseObject']>;
	arrived: number;
	lastRunOnArrival?: Cursor;
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
 * Where activation starts the cursor: from now, or, with `updatedFrom` (a trigger activated by a version without cursors),
 * from the service's delivery log: events answered 2xx at that address ran, and so did those never delivered there that
 * are older than the first one that was; the others run now.
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

/** Static data without a cursor (a first delivery before any activation): one starting cursor per process, shared by a burst. */
async function startingCursorOnce(memory: LogReads, log: EventLog, filters: EventFilter[], webhookUrl: string): Promise<Cursor> {
	memory.starting ??= startingCursor(log, filters, webhookUrl).catch((error: Error) => {
		memory.starting = undefined;
		throw error;
	});
	return await memory.starting;
}

/** The delivery's items; undefined once answered here: nothing new (200), or the log not read in time (503, nothing runs). */
export async function runNewEvents(run: DeliveryRun): Promise<INodeExecutionData[] | undefined> {
	const { response, staticData, memory } = run;
	const log = new EventLog(run.node, run.client);
	const saved = savedCursor(staticData);
	// A starting cursor serves only until n8n saved one.
	if (saved) memory.starting = undefined;
	let share: Share;
	let from: Cursor;
	try {
		const filters = await triggerFilters(run.keys, run.stored, run.client);
		from = saved ?? (await startingCursorOnce(memory, log, filters, run.webhookUrl));
		// Once: the cursor n8n saved is behind the last run n8n stored alone before this delivery arrived (the read merges that in).
		if (run.lastRunOnArrival && !handlesAll(from, run.lastRunOnArrival) && !memory.reportedBehind) {
			memory.reportedBehind = true;
			run.logger.warn(
				`Clinic Trigger "${run.node.name}": the cursor n8n saved is behind the events this n8n process ran. Another node in this workflow (a polling trigger such as the Clinic Event Log Trigger, or a second Clinic Trigger) saved an older copy of the workflow's static data, another n8n process did, n8n did when the workflow was saved or republished, or n8n did not save the cursor with a run. Those events do not run again while this process runs; keep the Clinic Trigger alone in its workflow.`,
			);
		}
		share = await shareOfNextRead(memory, { log, filters, maxPerRun: MAX_EVENTS_PER_RUN, answerWithinMs: ANSWER_WITHIN_MS }, from, run.arrived + ANSWER_WITHIN_MS);
	} catch (error) {
		run.logger.warn(`Clinic Trigger "${run.node.name}": the event log could not be read (${(error as Error).message}); nothing ran, the service's retry or the next delivery runs its events`);
		response.status(503).set('Retry-After', '5').json({ error: 'The event log could not be read: try again' });
		return undefined;
	}
	const { events, cursor } = share;
	if (events.length === 0 || !cursor) {
		// Nothing new: the cursor is written only when it handles more (gaps given up), as n8n saves static data written to.
		// A saved cursor behind the confirmed one is usually only n8n's save still under way: no write for that. Nor while a
		// run is unanswered: n8n could save this cursor, without that run's events, after the run's own.
		const savedOrConfirmed = saved ? withConfirmed(memory, saved) : memory.confirmed;
		if (cursor && !memory.unanswered?.size && (!savedOrConfirmed || !handlesAll(savedOrConfirmed, cursor))) staticData.cursor = cursor;
		// Merged: a run n8n answered while this delivery's answer was on its way is confirmed already.
		if (cursor) memory.confirmed = withConfirmed(memory, cursor);
		response.status(200).json(NOTHING_NEW_ANSWER);
		return undefined;
	}
	// Alone: no other run in flight now (the unanswered events are these), and none handed out until n8n answers this one.
	const alone = memory.unanswered?.size === events.length;
	const handedOut = (memory.runsHandedOut = (memory.runsHandedOut ?? 0) + 1);
	void keepCursorMarkedUntilAnswered(run, cursor).then((stored) => {
		if (stored) memory.confirmed = withConfirmed(memory, cursor);
		// No other run's save can land after this one's: n8n's saved cursor handles it from now on.
		if (stored && alone && handedOut === memory.runsHandedOut) memory.lastRun = cursor;
		// Refused: the retry runs these events without reading the log up to them again (on a slow log, minutes).
		if (!stored) memory.readAhead = { base: from, events, cursor };
		for (const event of events) memory.unanswered?.delete(event.id);
	});
	const receivedAt = new Date().toISOString();
	return events.map((event) => ({ json: eventItemOf(event, { receivedAt }) }));
}

/**
 * n8n saves static data marked changed with the run: 2.x after storing it, before answering (webhook-helpers.ts), 1.x as
 * it answers; a refused run saves nothing. 2.x wraps the static data again on the way, clearing the mark set in webhook()
 * (workflow-runner.ts, `establishContextForPersistence`), so the cursor is set every millisecond until n8n answered.
 * Resolves with whether n8n stored the run (a 2xx). A closed connection still ends the response (`writableFinished`, without 'finish').
 */
async function keepCursorMarkedUntilAnswered({ response, staticData }: Pick<DeliveryRun, 'response' | 'staticData'>, cursor: Cursor): Promise<boolean> {
	// n8n's static data marks itself changed on any write.
	for (staticData.cursor = cursor; !response.writableFinished; await sleep(1)) staticData.cursor = cursor;
	return response.statusCode >= 200 && response.statusCode < 300;
}
