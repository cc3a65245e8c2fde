/**
 * Which logged event a delivery is. The service's deliveries carry no event id: a retried
 * delivery and a second event with the same payload are byte-identical. The event log
 * tells them apart: each matching event (same topic, name and value) is emitted once, the
 * oldest first, so N events with one payload start N runs and a retry starts none,
 * unless n8n answered every earlier delivery of it with a server error (no run stored).
 * A delivery the log cannot place in time runs without an id and stands for one event
 * with its payload: a copy placed later runs nothing.
 */
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { keptInProcess } from '../../credentials/ClinicProcessMemory';
import { withinDeadline } from './checkDeadlines';
import { EventLog } from '../shared/eventLog';
import type { EventFilter, EventRecord } from '../shared/eventRecord';
import { RecentDeliveries } from '../shared/deliveries';
import { FreshReads } from '../shared/freshReads';
import type { ClinicClient } from '../shared/transport';
import { pathOf } from '../shared/urls';

/**
 * A delivery is answered within seconds whatever the event log does (busy, failing,
 * stalled): past this the check gives up and the delivery runs without an event id.
 */
export const EVENT_LOG_CHECK_MS = 5000;

/** A first look at a log reads this many of its newest events; a later look, what was logged since. */
const RECENT_EVENTS = 50;
/**
 * How far back a delivery's event is searched when it is not among the events read so far
 * (a burst after an outage delivers events logged long before its last deliveries), and
 * how many events of each log are kept to compare deliveries with.
 */
export const EVENTS_SEARCHED = 1000;

/** The log's end, read once for the deliveries that arrive together (freshReads.ts). */
const logEndReads = new FreshReads<EventRecord[]>();

/**
 * How a delivery reads the log: `recent` reads what was logged since the last look (or the
 * newest events, on a first look); `deep` reads the newest EVENTS_SEARCHED events, for a
 * delivery whose event was not among them; `fresh` reads the newest events again, for their
 * delivery logs as they are now.
 */
type LogRead = 'recent' | 'deep' | 'fresh';

/**
 * Of each oldest-first log, the newest events read so far, newest first, without gaps:
 * what was logged since is read on from the first of them (where the event log client
 * remembers the log ended). `searched`: they reach EVENTS_SEARCHED back (or to the log's
 * start), so an event not among them is not in reach of a deep read either.
 */
interface KeptLog {
	events: EventRecord[];
	searched: boolean;
}
/** Logs kept: the most recently read. */
const LOGS_KEPT = 20;
const keptLogs = keptInProcess('event log events kept', `${LOGS_KEPT} logs of ${EVENTS_SEARCHED} events`, new Map<string, KeptLog>());
function keepLog(key: string, log: KeptLog): void {
	keptLogs.delete(key);
	if (log.events.length === 0) return;
	keptLogs.set(key, { events: log.events.slice(0, EVENTS_SEARCHED), searched: log.searched });
	if (keptLogs.size > LOGS_KEPT) keptLogs.delete(keptLogs.keys().next().value as string);
}

/** Newer copies of events replace older ones (their delivery logs grow); newest first. */
function merge(newer: EventRecord[], older: EventRecord[]): EventRecord[] {
	const byId = new Map(older.map((event) => [event.id, event]));
	for (const event of newer) byId.set(event.id, event);
	return [...byId.values()].sort((a, b) => b.id - a.id);
}

/** The events to compare a delivery with, newest first, after a read of the log of kind `kind`. */
async function readLog(ctx: IWebhookFunctions, client: ClinicClient, key: string, filter: EventFilter, kind: LogRead): Promise<EventRecord[]> {
	// A deep read is the fallback when a faster read missed: it trusts no page cap seen before.
	const log = new EventLog(ctx, client, { proveEnd: kind === 'deep' });
	const kept = keptLogs.get(key);
	if (kept && kind === 'recent') {
		const added = await log.readSince(filter, kept.events[0]);
		if (added) {
			const events = [...added.reverse(), ...kept.events];
			keepLog(key, { events, searched: kept.searched });
			return events;
		}
	}
	const max = kind === 'deep' ? EVENTS_SEARCHED : RECENT_EVENTS;
	const { events, oldestFirstLength } = await log.tail(filter, max);
	// Only an oldest-first log is read on from its end; its newest events join those kept
	// when they reach them (else there would be a gap between the two).
	if (oldestFirstLength === undefined) {
		keptLogs.delete(key);
		return events;
	}
	const searched = kind === 'deep' || events.length < max;
	const joins = kept !== undefined && events.some((event) => event.id <= kept.events[0].id);
	keepLog(key, joins ? { events: merge(events, kept.events), searched: searched || kept.searched } : { events, searched });
	return keptLogs.get(key)?.events ?? events;
}

/** Events this n8n process has emitted, by trigger and event id (kept a day). */
const emittedEvents = keptInProcess('events emitted', '20,000 events, a day each', new RecentDeliveries(20_000));
const EMITTED_FOR_MS = 24 * 60 * 60_000;

/** Records that the trigger emits this event now; false when this process emitted it already. */
export function claimEvent(triggerKey: string, eventId: number): boolean {
	return !emittedEvents.seen(`${triggerKey}\n${eventId}`, EMITTED_FOR_MS);
}

/**
 * What this process ran for each trigger and payload, one record each:
 * - `lastRunAt`: when a run last started. A delivery the log cannot answer for in time, with
 *   a payload that ran within COPY_WINDOW_MS, is taken for a copy of that delivery (the
 *   service retries within seconds) and runs nothing. Its limit: a distinct event with the
 *   same payload in that window, while the log cannot answer, runs not at all.
 * - `withoutId`: when each run started without an event id (the log could not place the
 *   delivery in time), kept a day. Each stands for one logged event with that payload: when
 *   a later copy places such an event, the event has run already.
 */
interface PayloadRuns {
	lastRunAt: number;
	withoutId: number[];
}
export const COPY_WINDOW_MS = 10 * 60_000;
const PAYLOADS_KEPT = 10_000;
const payloadRuns = keptInProcess('runs of each payload', `${PAYLOADS_KEPT} payloads`, new Map<string, PayloadRuns>());

function runsOf(key: string): PayloadRuns {
	const now = Date.now();
	const runs = payloadRuns.get(key);
	return { lastRunAt: runs?.lastRunAt ?? 0, withoutId: (runs?.withoutId ?? []).filter((at) => now - at < EMITTED_FOR_MS) };
}

function keepRuns(key: string, runs: PayloadRuns): void {
	// Most recently used last: the first key is the one to drop.
	payloadRuns.delete(key);
	payloadRuns.set(key, runs);
	if (payloadRuns.size > PAYLOADS_KEPT) payloadRuns.delete(payloadRuns.keys().next().value as string);
}

function ranJustNow(key: string): void {
	keepRuns(key, { ...runsOf(key), lastRunAt: Date.now() });
}

/** The log could not answer in time: a copy of a delivery that just ran is a repeat, anything else runs without an id. */
function unplaced(key: string): Resolution {
	if (Date.now() - runsOf(key).lastRunAt < COPY_WINDOW_MS) return { kind: 'repeat' };
	return startRunWithoutId(key);
}

function startRunWithoutId(key: string): Resolution {
	const now = Date.now();
	keepRuns(key, { lastRunAt: now, withoutId: [...runsOf(key).withoutId, now] });
	return { kind: 'unknown' };
}

/** The event just claimed, or a repeat when a run without an id of this payload already stood for it. */
function runEvent(key: string, event: EventRecord): Resolution {
	const runs = runsOf(key);
	if (runs.withoutId.length === 0) {
		keepRuns(key, { lastRunAt: Date.now(), withoutId: [] });
		return { kind: 'event', event };
	}
	runs.withoutId.shift();
	keepRuns(key, runs);
	return { kind: 'repeat' };
}

/** Forgets which events ran, as when the service's log starts again from id 1 (tests). */
export function forgetEmittedEvents(): void {
	emittedEvents.clear();
	payloadRuns.clear();
}

export type Resolution =
	| { kind: 'event'; event: EventRecord }
	/** Every matching event was emitted already: a repeated delivery. */
	| { kind: 'repeat' }
	/** The log could not be read, or holds no such event (yet): emit without an id, never drop. */
	| { kind: 'unknown' };

/** JSON with sorted keys: the same value whatever order the service wrote its keys in. */
function canonical(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
	if (value && typeof value === 'object') {
		const record = value as Record<string, unknown>;
		return `{${Object.keys(record)
			.sort()
			.map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`)
			.join(',')}}`;
	}
	return JSON.stringify(value) ?? 'null';
}

/** Each logged event's value written out once, however many deliveries of a burst compare with it. */
const canonicalValues = new WeakMap<EventRecord, string>();
function canonicalValueOf(event: EventRecord): string {
	let written = canonicalValues.get(event);
	if (written === undefined) {
		written = canonical((event as IDataObject).value);
		canonicalValues.set(event, written);
	}
	return written;
}

export async function resolveDelivery(
	ctx: IWebhookFunctions,
	client: ClinicClient,
	triggerKey: string,
	filter: { topic: string; name: string },
	payload: unknown,
): Promise<Resolution> {
	const arrivedAt = logEndReads.arrival();
	const deadline = Date.now() + EVENT_LOG_CHECK_MS;
	const credentialIds = Object.values(ctx.getNode().credentials ?? {}).map((credential) => credential.id);
	const key = [...credentialIds, (await client.integrationSettings()).webhookBaseUrl, filter.topic, filter.name].join('\n');
	const wanted = canonical(payload);
	const payloadKey = `${triggerKey}\n${wanted}`;
	const matchingIn = (events: EventRecord[]) =>
		events.filter((event) => canonicalValueOf(event) === wanted).sort((a, b) => a.id - b.id);
	const read = async (kind: LogRead) =>
		await withinDeadline(
			logEndReads.read(`${key}\n${kind}`, arrivedAt, async () => await readLog(ctx, client, key, filter, kind)),
			deadline,
			`no answer within ${EVENT_LOG_CHECK_MS / 1000} s`,
		);
	let matching: EventRecord[];
	try {
		matching = matchingIn(await read('recent'));
		// Chosen and recorded in one synchronous step: two copies at once cannot both take it.
		const chosen = matching.find((event) => claimEvent(triggerKey, event.id));
		if (chosen) return runEvent(payloadKey, chosen);
		if (matching.length === 0 && !keptLogs.get(key)?.searched) {
			// Logged before the events read so far: search further back.
			matching = matchingIn(await read('deep'));
		} else if (matching.length > 0) {
			// Every matching event was emitted: decide on their delivery logs as they are now.
			matching = matchingIn(await read('fresh'));
		}
	} catch (error) {
		ctx.logger.warn(
			`Clinic Trigger "${ctx.getNode().name}": the event log could not be read (${(error as Error).message}); a copy of a delivery that just ran is answered as a repeat, any other starts a run without an event id`,
		);
		return unplaced(payloadKey);
	}
	if (matching.length === 0) return startRunWithoutId(payloadKey);
	const chosen = matching.find((event) => claimEvent(triggerKey, event.id));
	if (chosen) return runEvent(payloadKey, chosen);
	const ownPath = pathOf(ctx.getNodeWebhookUrl('default'));
	const unstored = matching.find((event) => onlyServerErrorsAt(event, ownPath));
	if (!unstored) return { kind: 'repeat' };
	ranJustNow(payloadKey);
	return { kind: 'event', event: unstored };
}


/**
 * Every earlier delivery of the event to this trigger was answered with a server error:
 * n8n (2.x) answers only once the run is stored, so none of them started one, and this
 * delivery is the service's retry, not a repeat. A delivery with no answer (a timeout)
 * may have started a run: it does not count. The service logs each delivery's target URL,
 * so the trigger's own ones are those to the path of its webhook address.
 */
function onlyServerErrorsAt(event: EventRecord, path: string): boolean {
	if (!path) return false;
	const ours = (event.logs ?? []).filter((log) => pathOf(String(log.target_url ?? '')) === path);
	return ours.length > 0 && ours.every((log) => typeof log.response_code === 'number' && log.response_code >= 500);
}
