/**
 * The duplicate check (Duplicate Check: Event Log), decided from the service's event log,
 * shared by every n8n process and kept across restarts (deliveries carry no event id). A
 * delivery's event is the oldest logged event with its topic, name and payload, logged
 * after this trigger subscribed (or tried at its address), with no 2xx at this address but
 * the trigger's repeat answer, and not claimed in this process (memory holds only copies in
 * flight, which the log cannot show yet). When all are claimed, one runs again only if every
 * try here since its claim is a server error or a repeat answer (n8n refused to store its
 * run); else a repeat. When the log does not answer within EVENT_LOG_CHECK_MS, the delivery
 * runs without an event id (never dropped) and claims its event once the log answers;
 * unless its payload ran here within the hour: then it waits for the log, being most
 * likely a copy.
 */
import { sleep } from 'n8n-workflow';
import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { EventLog, type Enough } from '../shared/eventLog';
import type { EventFilter, EventRecord } from '../shared/eventRecord';
import type { ClinicClient } from '../shared/transport';
import { pathOf } from '../shared/urls';
import { taken, type Logged, type Taken } from './memory';
import { sha256Hex } from './signature';

/** The trigger's answer to a delivery it takes for a repeat: a 200, so the service stops retrying. */
export const REPEAT_ANSWER = { received: true, duplicate: true };

/** Whether an answer the service logged (its `response` text) is the trigger's repeat answer. */
export function answeredAsRepeat(response: string): boolean {
	try {
		return (JSON.parse(response) as { duplicate?: unknown }).duplicate === true;
	} catch {
		return false;
	}
}

/** A delivery is answered within seconds whatever the log does (past this it runs without an id): the service's wait is short. */
export const EVENT_LOG_CHECK_MS = 5000;
/** How far back a delivery's event is searched (a burst after an outage); a read stops once it has every waiting delivery's. */
export const MAX_READ = 1000;
/** Each request of a read: past the delivery's answer, a read still serves the runs without an id and the next deliveries. */
export const EVENT_LOG_READ_MS = 30_000;
/** How long a claim stands for a copy in flight. */
const CLAIM_KEPT_MS = 60 * 60_000;

/** `unknown`: run without an event id; `note` says why in the item when the log could not be read. */
export type Placement = { kind: 'event'; event: EventRecord } | { kind: 'repeat' } | { kind: 'unknown'; note?: string };

export interface DeliveryToPlace {
	/** This trigger and event: what the check's memory is keyed by. */
	key: string;
	filter: EventFilter;
	payload: unknown;
	/** When this trigger's subscription was made (the service's `created_at`), if known. */
	since?: string;
	/** The path of this trigger's webhook address: the service logs each try's `target_url`. */
	ownPath: string;
}

/** JSON with sorted keys: the same value whatever order the service wrote its keys in. */
function canonical(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
	if (value && typeof value === 'object') {
		const record = value as Record<string, unknown>;
		const keys = Object.keys(record).sort();
		return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(',')}}`;
	}
	return JSON.stringify(value) ?? 'null';
}

/**
 * The newest matching events, from a read that started after the delivery arrived: the
 * service logs an event before delivering it, so such a read holds it. Deliveries arriving
 * while a read is on the wire wait for the next one, which starts when that one ends and
 * reads back until it has every one of their payloads (or MAX_READ events).
 */
function readFor(ctx: IWebhookFunctions, client: ClinicClient, delivery: DeliveryToPlace, payload: string): Promise<Logged[]> {
	const key = `read:${delivery.key}`;
	const start = (wanted: Set<string>): Promise<Logged[]> => {
		// Each event's payload made canonical once per read, not once per delivery waiting on it.
		const payloads = new Map<number, string>();
		const payloadOf = (event: EventRecord) => payloads.get(event.id) ?? payloads.set(event.id, canonical((event as IDataObject).value)).get(event.id)!;
		const enough: Enough = (events) => {
			const read = new Set(events.map(payloadOf));
			return [...wanted].every((one) => read.has(one));
		};
		const recent = async (proveEnd: boolean) => await new EventLog(ctx, client, { proveEnd }).recent(delivery.filter, MAX_READ, undefined, enough);
		// Not all found: read again trusting no page cap seen before (a short page may be the service's cap now).
		const events = recent(false).then(async (found) => (enough(found) ? found : await recent(true)).map((event) => ({ event, payload: payloadOf(event) })));
		const read: Taken = { kind: 'read', events };
		taken.set(key, read);
		// Gone once answered, unless deliveries wait for the next read (which then takes its place).
		const done = () => !read.next && taken.get(key) === read && taken.delete(key);
		read.events.then(done, done);
		return read.events;
	};
	const onWire = taken.get(key);
	if (onWire?.kind !== 'read') return start(new Set([payload]));
	const wanted = onWire.next?.wanted ?? new Set<string>();
	onWire.next ??= { wanted, events: onWire.events.then(() => start(wanted), () => start(wanted)) };
	wanted.add(payload);
	return onWire.next.events;
}

/** The delivery's answer within `ms`, or an error that says so (the work goes on for others). */
async function within<T>(work: Promise<T>, ms: number): Promise<T> {
	work.catch(() => undefined);
	const late = sleep(ms).then(() => Promise.reject(new Error(`no answer within ${ms / 1000} s`)));
	late.catch(() => undefined);
	return await Promise.race([work, late]);
}

export async function placeDelivery(ctx: IWebhookFunctions, client: ClinicClient, delivery: DeliveryToPlace): Promise<Placement> {
	const wanted = canonical(delivery.payload);
	const ranKey = `ran:${delivery.key}\n${sha256Hex(wanted)}`;
	const read = readFor(ctx, client, delivery, wanted);
	try {
		return place(await within(read, EVENT_LOG_CHECK_MS), delivery, wanted, ranKey);
	} catch (error) {
		// This payload ran here within the hour, so this is most likely a copy: wait for the log
		// (each request at most EVENT_LOG_READ_MS) and for the claim of a run without an id.
		const ran = taken.get(ranKey, CLAIM_KEPT_MS);
		if (ran?.kind === 'ran') {
			try {
				await ran.claimed;
				return place(await read, delivery, wanted, ranKey);
			} catch {
				// The log cannot be read: run without an id as below.
			}
		}
		ctx.logger.warn(`Clinic Trigger "${ctx.getNode().name}": the event log could not be read (${(error as Error).message}); the delivery runs without an event id`);
		// Once the log answers, the run without an id claims its event, so that its copies are repeats.
		taken.set(ranKey, { kind: 'ran', claimed: read.then((logged) => void place(logged, delivery, wanted, ranKey)).catch(() => undefined) });
		return { kind: 'unknown', note: `The event log could not be read (${(error as Error).message}): this run has no event id, and may repeat an event that ran already.` };
	}
}

/** The delivery's event among the logged ones with its payload, claimed in the same synchronous step. */
function place(logged: Logged[], delivery: DeliveryToPlace, wanted: string, ranKey: string): Placement {
	const found = logged.filter((one) => one.payload === wanted).map((one) => one.event).sort((a, b) => a.id - b.id);
	const { ownPath } = delivery;
	const since = Date.parse(delivery.since ?? '');
	const ours = found.filter((event) => !(Date.parse(event.created_at) < since) || triesAt(event, ownPath).length > 0);
	if (ours.length === 0) return { kind: 'unknown' };
	const open = ours.filter((event) => !ranAt(event, ownPath));
	// Checked and claimed in one synchronous step: two copies at once cannot both take an event.
	const unclaimed = open.find((event) => claimOf(delivery.key, event) === undefined);
	const chosen = unclaimed ?? open.find((event) => refusedSinceClaimed(event, ownPath, claimOf(delivery.key, event)));
	if (!chosen) return { kind: 'repeat' };
	taken.set(claimKeyOf(delivery.key, chosen), { kind: 'claim', triesSeen: triesAt(chosen, ownPath).length });
	taken.set(ranKey, { kind: 'ran' });
	return { kind: 'event', event: chosen };
}

const claimKeyOf = (key: string, event: EventRecord) => `claim:${key}\n${event.id}`;
const claimOf = (key: string, event: EventRecord) => taken.get(claimKeyOf(key, event), CLAIM_KEPT_MS);

/** An event caught up by resubscribing is claimed as a delivery's would be; false when one was already. */
export function claimCaughtUp(key: string, event: EventRecord, path: string): boolean {
	if (claimOf(key, event)) return false;
	taken.set(claimKeyOf(key, event), { kind: 'claim', triesSeen: triesAt(event, path).length });
	return true;
}

/** The event's tries at this trigger's address (the path: n8n's host may be written otherwise). */
export function triesAt(event: EventRecord, path: string): IDataObject[] {
	if (!path) return [];
	return (event.logs ?? []).filter((log) => pathOf(String(log.target_url ?? '')) === path);
}

const is2xx = (log: IDataObject) => typeof log.response_code === 'number' && log.response_code >= 200 && log.response_code < 300;
const is5xx = (log: IDataObject) => typeof log.response_code === 'number' && log.response_code >= 500;
const isRepeatAnswer = (log: IDataObject) => is2xx(log) && answeredAsRepeat(String(log.response ?? ''));

/** A try at this address got a 2xx that was not the trigger's repeat answer: the event ran here. */
export function ranAt(event: EventRecord, path: string): boolean {
	return triesAt(event, path).some((log) => is2xx(log) && !isRepeatAnswer(log));
}

/**
 * A claimed event whose run n8n refused to store: since it was claimed the log shows more
 * tries here, and every try here is a server error or a repeat answer, one at least an error.
 */
function refusedSinceClaimed(event: EventRecord, path: string, claim: ReturnType<typeof taken.get>): boolean {
	if (claim?.kind !== 'claim') return false;
	const tries = triesAt(event, path);
	return tries.length > claim.triesSeen && tries.some(is5xx) && tries.every((log) => is5xx(log) || isRepeatAnswer(log));
}
