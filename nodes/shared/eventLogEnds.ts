/**
 * The end of the event log: the one rule that decides it for every reader, and where each
 * oldest-first log ended when this process last looked at it, so that the next look starts
 * there.
 */
import { keepNewest, keptInProcess } from '../../credentials/ClinicProcessMemory';
import type { EventRecord } from './eventRecord';

/** One page of the event log, as the service lists it, plus what was asked for. */
export interface EventPage {
	offset: number;
	limit: number;
	events: EventRecord[];
	/** The log ends with this page (`endsLog`). */
	last: boolean;
}

/**
 * The end of the event log: the one rule every reader follows. The service's largest page
 * is not documented, so a page shorter than asked may only be its cap. A page ends the log
 * when it comes back empty, or shorter than asked and shorter than the longest page the
 * service has given for this log (a cap is at least that long).
 */
export function endsLog(length: number, asked: number, longestPage: number): boolean {
	return length === 0 || (length < asked && length < longestPage);
}

/**
 * Where an oldest-first log ended: its number of events, the id of the last one, and the
 * longest page the service gave for it (for `endsLog`).
 */
export interface KnownEnd {
	length: number;
	lastId: number;
	longestPage: number;
}

/** Logs whose end is remembered: a few per event kind a trigger listens for. */
const KNOWN_ENDS_KEPT = 1000;

/**
 * The last seen end of each oldest-first log, for the whole process (module state, as the
 * host limiters are), so that the next look at a log starts there: the Clinic Trigger
 * looks at the end of the log on every delivery. Only a hint: `tail` checks it against
 * what the service lists and searches afresh when it does not hold.
 */
const logEnds = keptInProcess('event log ends', `${KNOWN_ENDS_KEPT} logs`, new Map<string, KnownEnd>());

export function rememberEnd(key: string, end: KnownEnd): void {
	keepNewest(logEnds, key, end, KNOWN_ENDS_KEPT);
}

/** The remembered end of a log, if any. */
export function logEndOf(key: string): KnownEnd | undefined {
	return logEnds.get(key);
}

/** Forgets one log's end: the log no longer looks as remembered. */
export function forgetLogEnd(key: string): void {
	logEnds.delete(key);
}
