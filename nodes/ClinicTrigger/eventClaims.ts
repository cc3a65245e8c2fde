/**
 * Which logged events this n8n process started a run for, per trigger (kept a day), and
 * how n8n answered the delivery that started it. n8n answers a delivery that starts a run
 * once the run is stored (2.x) or taken (1.x): a 2xx means the event ran, and so may a
 * connection closed before any answer; any other answer means it did not, and a copy of
 * the event may run it instead. A copy that arrives while that answer is still out waits
 * for it rather than ask the event log, which cannot show a delivery not answered yet.
 */
import { keepNewest, keptInProcess } from '../../credentials/ClinicProcessMemory';

/** The response n8n answers a delivery on (express's), as far as a claim watches it. */
export interface DeliveryAnswer {
	once(event: 'finish' | 'close', listener: () => void): unknown;
	statusCode: number;
	writableFinished: boolean;
}

/**
 * How n8n answered a delivery: `status` undefined while it has not answered, null when the
 * connection closed without an answer (the run may have started).
 */
export interface WatchedAnswer {
	status?: number | null;
	/** Settles when n8n answered. */
	answered: Promise<void>;
}

/** Starts watching how n8n answers a delivery; call it in the step that records the delivery. */
export function watchAnswer(answer: DeliveryAnswer): WatchedAnswer {
	const watched: { status?: number | null } = {};
	const answered = new Promise<void>((resolve) => {
		answer.once('finish', () => {
			watched.status = answer.statusCode;
			resolve();
		});
		answer.once('close', () => {
			watched.status ??= answer.writableFinished ? answer.statusCode : null;
			resolve();
		});
	});
	return Object.assign(watched, { answered });
}

const ranOrMayHave = (status: number | null) => status === null || (status >= 200 && status < 300);

/** n8n answered and did not run it (a server error: no run stored). */
export const refused = (watched: WatchedAnswer) => watched.status !== undefined && !ranOrMayHave(watched.status);

export const pending = (watched: WatchedAnswer) => watched.status === undefined;

interface Claim {
	at: number;
	/** Absent for a claim made without a delivery to watch (a catch-up after resubscribing): then only the event log can tell. */
	watched?: WatchedAnswer;
}

const CLAIMS_KEPT = 20_000;
const CLAIMED_FOR_MS = 24 * 60 * 60_000;
const claims = keptInProcess('events claimed', `${CLAIMS_KEPT} events, a day each`, new Map<string, Claim>());

function claimKey(triggerKey: string, eventId: number): string {
	return `${triggerKey}\n${eventId}`;
}

function current(key: string): Claim | undefined {
	const claim = claims.get(key);
	if (claim && Date.now() - claim.at >= CLAIMED_FOR_MS) {
		claims.delete(key);
		return undefined;
	}
	return claim;
}

/** Records the claim and starts watching its answer in one synchronous step. */
function record(key: string, answer: DeliveryAnswer | undefined): void {
	keepNewest(claims, key, { at: Date.now(), watched: answer && watchAnswer(answer) }, CLAIMS_KEPT);
}

/** Records that the delivery answered on `answer` runs this event; false when this process claimed it already. */
export function claimEvent(triggerKey: string, eventId: number, answer?: DeliveryAnswer): boolean {
	const key = claimKey(triggerKey, eventId);
	if (current(key)) return false;
	record(key, answer);
	return true;
}

/**
 * Claims the event again for this delivery, when the event log shows it never ran: unless a
 * delivery this process watches is running it now, or ran it.
 */
export function claimAgain(triggerKey: string, eventId: number, answer: DeliveryAnswer): boolean {
	const key = claimKey(triggerKey, eventId);
	const claim = current(key);
	if (claim?.watched && !refused(claim.watched)) return false;
	record(key, answer);
	return true;
}

export type ClaimedDecision = { kind: 'takeOver'; eventId: number } | { kind: 'repeat' } | { kind: 'wait'; answered: Promise<void> } | { kind: 'askTheLog' };

/**
 * For a delivery whose matching events (oldest first) this process has all claimed: the
 * first one n8n refused to run is claimed again for this delivery; when every one ran (or
 * may have), the delivery is a repeat; while an answer is out, wait for it. Without a
 * watched answer for each, only the event log can tell.
 */
export function decideClaimed(triggerKey: string, eventIds: number[], answer: DeliveryAnswer): ClaimedDecision {
	const found = eventIds.map((id) => ({ id, watched: current(claimKey(triggerKey, id))?.watched }));
	if (found.some(({ watched }) => !watched)) return { kind: 'askTheLog' };
	const refusedRun = found.find(({ watched }) => refused(watched!));
	if (refusedRun) {
		record(claimKey(triggerKey, refusedRun.id), answer);
		return { kind: 'takeOver', eventId: refusedRun.id };
	}
	const waiting = found.filter(({ watched }) => pending(watched!));
	if (waiting.length === 0) return { kind: 'repeat' };
	return { kind: 'wait', answered: Promise.race(waiting.map(({ watched }) => watched!.answered)) };
}

/** Lets the next copy claim the event (this delivery will not run it). */
export function releaseClaim(triggerKey: string, eventId: number): void {
	claims.delete(claimKey(triggerKey, eventId));
}

/** Forgets every claim, as when the service's log starts again from id 1 (tests). */
export function forgetClaims(): void {
	claims.clear();
}
