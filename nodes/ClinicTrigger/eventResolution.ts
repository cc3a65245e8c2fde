/**
 * Which logged event a delivery is. The service's deliveries carry no event id: a retried
 * delivery and a second event with the same payload are byte-identical. The event log
 * tells them apart: each matching event (same topic, name and value) is emitted once, the
 * oldest first, so N events with one payload start N runs and a retry starts none,
 * unless n8n refused the run of every earlier delivery of it (a server error: no run
 * stored). An event already read and not yet run is taken without reading again, so most
 * deliveries of a burst are decided from one read. A delivery the log cannot place in time
 * runs without an id and stands for one event with its payload: a copy placed later runs
 * nothing (unless n8n refused that run, payloadRuns.ts).
 */
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { keepNewest, keptInProcess } from '../../credentials/ClinicProcessMemory';
import { withinDeadline } from './checkDeadlines';
import { watchAnswer, type WatchedAnswer } from './deliveryAnswer';
import { claimAgain, claimEvent, decideClaimed, releaseClaim } from './eventClaims';
import { COPY_WINDOW_MS, ranJustNow, runEvent, startRunWithoutId, unplaced, type Resolution } from './payloadRuns';
import { EventLog } from '../shared/eventLog';
import type { EventFilter, EventRecord } from '../shared/eventRecord';
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
	if (log.events.length === 0) {
		keptLogs.delete(key);
		return;
	}
	keepNewest(keptLogs, key, { events: log.events.slice(0, EVENTS_SEARCHED), searched: log.searched }, LOGS_KEPT);
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
	// One watch of n8n's answer, kept by whatever this delivery claims or runs.
	const answer = watchAnswer(ctx.getResponseObject());
	/**
	 * Claims the oldest of `events` not claimed yet, in one synchronous step (two copies at
	 * once cannot both take it), and runs it; undefined when every one is claimed.
	 */
	const takeUnclaimed = (events: EventRecord[]): Resolution | undefined => {
		const chosen = events.find((event) => claimEvent(triggerKey, event.id, answer));
		if (!chosen) return undefined;
		const resolution = runEvent(payloadKey, chosen, answer);
		// Asked to send it again: the retry is to find the event unclaimed.
		if (resolution.kind === 'later') releaseClaim(triggerKey, chosen.id);
		return resolution;
	};
	// An event already read and not yet run is this delivery's: no need to read again.
	const fromKept = takeUnclaimed(matchingIn(keptLogs.get(key)?.events ?? []));
	if (fromKept) return fromKept;
	let matching: EventRecord[];
	try {
		matching = matchingIn(await read('recent'));
		const taken = takeUnclaimed(matching);
		if (taken) return taken;
		if (matching.length === 0 && !keptLogs.get(key)?.searched) {
			// Logged before the events read so far: search further back.
			matching = matchingIn(await read('deep'));
		} else if (matching.length > 0) {
			// Every matching event was claimed: how n8n answered the deliveries that claimed them
			// decides, or else their delivery logs as they are now.
			const decided = await decideFromAnswers(triggerKey, matching, deadline, answer);
			if (decided) return decided;
			matching = matchingIn(await read('fresh'));
		}
	} catch (error) {
		ctx.logger.warn(
			`Clinic Trigger "${ctx.getNode().name}": the event log could not be read (${(error as Error).message}); a copy of a delivery that ran in the last ${COPY_WINDOW_MS / 60_000} minutes is answered as a repeat (or asked to send again while n8n has not answered the first), any other starts a run without an event id`,
		);
		return unplaced(payloadKey, answer);
	}
	if (matching.length === 0) return startRunWithoutId(payloadKey, answer);
	const taken = takeUnclaimed(matching);
	if (taken) return taken;
	const ownPath = pathOf(ctx.getNodeWebhookUrl('default'));
	const unstored = matching.find((event) => onlyServerErrorsAt(event, ownPath) && claimAgain(triggerKey, event.id, answer));
	if (!unstored) return { kind: 'repeat' };
	ranJustNow(payloadKey, answer);
	return { kind: 'event', event: unstored };
}

/** Waits (to the deadline) for n8n's answers to the deliveries that claimed these events; undefined: ask the log. */
async function decideFromAnswers(triggerKey: string, matching: EventRecord[], deadline: number, answer: WatchedAnswer): Promise<Resolution | undefined> {
	for (;;) {
		const decision = decideClaimed(triggerKey, matching.map((event) => event.id), answer);
		if (decision.kind === 'askTheLog') return undefined;
		if (decision.kind === 'repeat') return decision;
		if (decision.kind === 'takeOver') return { kind: 'event', event: matching.find((event) => event.id === decision.eventId)! };
		try {
			await withinDeadline(decision.answered, deadline, 'n8n did not answer the first delivery in time');
		} catch {
			// Neither a repeat nor a run can be told yet: the service's retry will find the answer.
			return { kind: 'later' };
		}
	}
}

/**
 * Every earlier delivery of the event to this trigger was answered with a server error:
 * n8n (2.x) answers only once the run is stored, so none of them started one (nor did the
 * trigger's own 503 to a copy), and this delivery is the service's retry, not a repeat. A
 * delivery with no answer (a timeout) may have started a run: it does not count. The
 * service logs each delivery's target URL, so the trigger's own ones are those to the path
 * of its webhook address.
 */
function onlyServerErrorsAt(event: EventRecord, path: string): boolean {
	if (!path) return false;
	const ours = (event.logs ?? []).filter((log) => pathOf(String(log.target_url ?? '')) === path);
	return ours.length > 0 && ours.every((log) => typeof log.response_code === 'number' && log.response_code >= 500);
}
