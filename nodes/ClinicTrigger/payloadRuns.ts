/**
 * What this process ran for each trigger and payload: what a delivery resolves to when the
 * event log cannot place it, and how runs without an event id are accounted for once a
 * later copy places their event.
 */
import type { EventRecord } from '../shared/eventRecord';
import { keepNewest, keptInProcess } from '../../credentials/ClinicProcessMemory';
import { forgetClaims } from './eventClaims';

const EMITTED_FOR_MS = 24 * 60 * 60_000;

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
	keepNewest(payloadRuns, key, runs, PAYLOADS_KEPT);
}

export function ranJustNow(key: string): void {
	keepRuns(key, { ...runsOf(key), lastRunAt: Date.now() });
}

/** The log could not answer in time: a copy of a delivery that just ran is a repeat, anything else runs without an id. */
export function unplaced(key: string): Resolution {
	if (Date.now() - runsOf(key).lastRunAt < COPY_WINDOW_MS) return { kind: 'repeat' };
	return startRunWithoutId(key);
}

export function startRunWithoutId(key: string): Resolution {
	const now = Date.now();
	keepRuns(key, { lastRunAt: now, withoutId: [...runsOf(key).withoutId, now] });
	return { kind: 'unknown' };
}

/** The event just claimed, or a repeat when a run without an id of this payload already stood for it. */
export function runEvent(key: string, event: EventRecord): Resolution {
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
	forgetClaims();
	payloadRuns.clear();
}

export type Resolution =
	| { kind: 'event'; event: EventRecord }
	/** Every matching event was emitted already: a repeated delivery. */
	| { kind: 'repeat' }
	/** The log could not be read, or holds no such event (yet): emit without an id, never drop. */
	| { kind: 'unknown' }
	/** A copy of a delivery n8n has not answered yet: the service is to send it again later. */
	| { kind: 'later' };

