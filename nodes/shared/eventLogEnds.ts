/**
 * Where each oldest-first event log ended when this process last looked at it, so that
 * the next look starts there.
 */
import { keptInProcess } from '../../credentials/ClinicProcessMemory';

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
	// Most recently used last: the first key is the one to drop.
	logEnds.delete(key);
	logEnds.set(key, end);
	if (logEnds.size > KNOWN_ENDS_KEPT) logEnds.delete(logEnds.keys().next().value as string);
}

/** The remembered end of a log, if any. */
export function logEndOf(key: string): KnownEnd | undefined {
	return logEnds.get(key);
}

/** Forgets one log's end: the log no longer looks as remembered. */
export function forgetLogEnd(key: string): void {
	logEnds.delete(key);
}
