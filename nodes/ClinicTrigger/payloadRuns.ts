/**
 * What this process ran for each trigger and payload: what a delivery resolves to when the
 * event log cannot place it, and how runs without an event id are accounted for once a
 * later copy places their event. Each run keeps how n8n answered the delivery that started
 * it (deliveryAnswer.ts): a run n8n refused (a server error, nothing stored) stands for nothing.
 */
import type { EventRecord } from '../shared/eventRecord';
import { keepNewest, keptInProcess } from '../../credentials/ClinicProcessMemory';
import { pending, recent, refused, type WatchedAnswer } from './deliveryAnswer';
import { forgetClaims } from './eventClaims';

interface Run {
	at: number;
	answer: WatchedAnswer;
}

/**
 * What this process ran for each trigger and payload, one record each:
 * - `last`: the run that started last. A delivery the log cannot answer for in time, with
 *   a payload that ran within COPY_WINDOW_MS, is taken for a copy of that delivery (the
 *   service retries within seconds) and runs nothing; while n8n has not answered that run's
 *   delivery, the copy is to be sent again later. Its limit: a distinct event with the
 *   same payload in that window, while the log cannot answer, runs not at all.
 * - `withoutId`: the runs started without an event id (the log could not place the
 *   delivery in time), kept a day. Each stands for one logged event with that payload: when
 *   a later copy places such an event, the event has run already.
 */
interface PayloadRuns {
	last?: Run;
	withoutId: Run[];
}
export const COPY_WINDOW_MS = 10 * 60_000;
const PAYLOADS_KEPT = 10_000;
const payloadRuns = keptInProcess('runs of each payload', `${PAYLOADS_KEPT} payloads`, new Map<string, PayloadRuns>());

function runsOf(key: string): PayloadRuns {
	const runs = payloadRuns.get(key);
	const standing = (run: Run) => recent(run.at) && !refused(run.answer);
	return { last: runs?.last, withoutId: (runs?.withoutId ?? []).filter(standing) };
}

function keepRuns(key: string, runs: PayloadRuns): void {
	keepNewest(payloadRuns, key, runs, PAYLOADS_KEPT);
}

export function ranJustNow(key: string, answer: WatchedAnswer): void {
	keepRuns(key, { ...runsOf(key), last: { at: Date.now(), answer } });
}

/** The log could not answer in time: a copy of a delivery that just ran is a repeat, anything else runs without an id. */
export function unplaced(key: string, answer: WatchedAnswer): Resolution {
	const { last } = runsOf(key);
	if (!last || Date.now() - last.at >= COPY_WINDOW_MS || refused(last.answer)) return startRunWithoutId(key, answer);
	return pending(last.answer) ? { kind: 'later' } : { kind: 'repeat' };
}

export function startRunWithoutId(key: string, answer: WatchedAnswer): Resolution {
	const run = { at: Date.now(), answer };
	keepRuns(key, { last: run, withoutId: [...runsOf(key).withoutId, run] });
	return { kind: 'unknown' };
}

/**
 * The event just claimed, or a repeat when a run without an id of this payload already
 * stood for it; while that run's delivery is unanswered, the delivery is to be sent again
 * later (and its claim given up).
 */
export function runEvent(key: string, event: EventRecord, answer: WatchedAnswer): Resolution {
	const runs = runsOf(key);
	if (runs.withoutId.length === 0) {
		keepRuns(key, { last: { at: Date.now(), answer }, withoutId: [] });
		return { kind: 'event', event };
	}
	const ran = runs.withoutId.find((run) => !pending(run.answer));
	if (!ran) return { kind: 'later' };
	keepRuns(key, { ...runs, withoutId: runs.withoutId.filter((run) => run !== ran) });
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
