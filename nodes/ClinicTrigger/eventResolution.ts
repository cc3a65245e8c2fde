/**
 * Which logged event a delivery is. The service's deliveries carry no event id: a retried
 * delivery and a second event with the same payload are byte-identical. The event log
 * tells them apart: each matching event (same topic, name and value) is emitted once, the
 * oldest first, so N events with one payload start N runs and a retry starts none,
 * unless n8n answered every earlier delivery of it with a server error (no run stored).
 */
import { sleep } from 'n8n-workflow';
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { EventLog } from '../shared/webhookService';
import type { EventFilter, EventRecord } from '../shared/webhookService';
import { RecentDeliveries } from '../shared/deliveries';
import { FreshReads } from '../shared/freshReads';
import type { ClinicClient } from '../shared/transport';
import { pathOf } from '../shared/urls';

/**
 * A delivery is answered within seconds whatever the event log does (busy, failing,
 * stalled): past this the check gives up and the delivery runs without an event id.
 */
export const EVENT_LOG_CHECK_MS = 5000;

/** How many of the newest matching events a delivery is compared with (more when many wait on one read). */
const RECENT_EVENTS = 50;
const MOST_RECENT_EVENTS = 1000;

/** The log's end, read once for the deliveries that arrive together (freshReads.ts). */
const logEndReads = new FreshReads<LogRead>();

interface LogRead {
	/** The newest events of the log, newest first. */
	events: EventRecord[];
	/** Only what was logged since the last read was read: older events are as read then. */
	readOn: boolean;
}

/**
 * Of each oldest-first log, the newest events the last read saw, newest first. The next
 * read asks only for what was logged since the first of them (where the event log client
 * remembers the log ended): one short page instead of the newest events again.
 */
const seenLogs = new Map<string, EventRecord[]>();
/** Events kept per log, and logs kept (the most recently read). */
const SEEN_EVENTS = 200;
const SEEN_LOGS = 50;

function rememberLog(key: string, events: EventRecord[] | undefined): void {
	seenLogs.delete(key);
	if (!events || events.length === 0) return;
	seenLogs.set(key, events.slice(0, SEEN_EVENTS));
	if (seenLogs.size > SEEN_LOGS) seenLogs.delete(seenLogs.keys().next().value as string);
}

/** Forgets what the reads of each log saw (tests start from a fresh process's state). */
export function forgetSeenLogs(): void {
	seenLogs.clear();
}

/**
 * The newest events of the log. With `readOn`, and a log seen before, only the events
 * logged since are read; otherwise its newest `window` events are read whole.
 */
async function readLog(ctx: IWebhookFunctions, client: ClinicClient, key: string, filter: EventFilter, window: number, readOn: boolean): Promise<LogRead> {
	const log = new EventLog(ctx, client);
	const seen = readOn ? seenLogs.get(key) : undefined;
	const added = seen && (await log.readOn(filter, seen[0]));
	if (seen && added) {
		const events = [...added.reverse(), ...seen];
		rememberLog(key, events);
		return { events: events.slice(0, window), readOn: true };
	}
	const { events, oldestFirstLength } = await log.tail(filter, window);
	// Only an oldest-first log is read on from its end.
	rememberLog(key, oldestFirstLength === undefined ? undefined : events);
	return { events, readOn: false };
}

/** Events this n8n process has emitted, by trigger and event id (kept a day). */
export const emittedEvents = new RecentDeliveries(20_000);
const EMITTED_FOR_MS = 24 * 60 * 60_000;

/** Records that the trigger emits this event now; false when this process emitted it already. */
export function claimEvent(triggerKey: string, eventId: number): boolean {
	return !emittedEvents.seen(`${triggerKey}\n${eventId}`, EMITTED_FOR_MS);
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
	const matchingIn = (read: LogRead) =>
		read.events.filter((event) => canonicalValueOf(event) === wanted).sort((a, b) => a.id - b.id);
	// Enough events for every delivery that waits on a read, with room for retries among them.
	const read = async (readOn: boolean) =>
		await withinCheckTime(
			logEndReads.read(`${key}\n${readOn}`, arrivedAt, async (waiting) =>
				await readLog(ctx, client, key, filter, Math.min(MOST_RECENT_EVENTS, Math.max(RECENT_EVENTS, 2 * waiting)), readOn),
			),
			deadline,
		);
	let matching: EventRecord[];
	try {
		let recent = await read(true);
		matching = matchingIn(recent);
		// Chosen and recorded in one synchronous step: two copies at once cannot both take it.
		const chosen = matching.find((event) => claimEvent(triggerKey, event.id));
		if (chosen) return { kind: 'event', event: chosen };
		// No new event for it among those just logged: decide on the newest events as the log holds them now.
		if (recent.readOn) {
			recent = await read(false);
			matching = matchingIn(recent);
		}
	} catch (error) {
		ctx.logger.warn(
			`Clinic Trigger "${ctx.getNode().name}": the event log could not be read (${(error as Error).message}); the delivery starts a run without an event id`,
		);
		return { kind: 'unknown' };
	}
	if (matching.length === 0) return { kind: 'unknown' };
	const chosen = matching.find((event) => claimEvent(triggerKey, event.id));
	if (chosen) return { kind: 'event', event: chosen };
	const ownPath = pathOf(ctx.getNodeWebhookUrl('default'));
	const unstored = matching.find((event) => onlyServerErrorsAt(event, ownPath));
	return unstored ? { kind: 'event', event: unstored } : { kind: 'repeat' };
}

/** A read's answer, or an error once the check's time is up (the read goes on for others). */
async function withinCheckTime<T>(read: Promise<T>, deadline: number): Promise<T> {
	const answer = await Promise.race([read, sleep(Math.max(0, deadline - Date.now())).then(() => LATE)]);
	if (answer !== LATE) return answer as T;
	read.catch(() => undefined);
	throw new Error(`no answer within ${EVENT_LOG_CHECK_MS / 1000} s`);
}
const LATE = Symbol('late');

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
