/**
 * Which logged events this n8n process started a run for, per trigger (kept a day), and
 * how n8n answered the delivery that started it (deliveryAnswer.ts): a run n8n refused
 * lets a copy of the event run it instead. A copy that arrives while that answer is still
 * out waits for it rather than ask the event log, which cannot show a delivery not answered yet.
 */
import { keepNewest, keptInProcess } from '../../credentials/ClinicProcessMemory';
import { pending, recent, refused, type WatchedAnswer } from './deliveryAnswer';

interface Claim {
	at: number;
	/** Absent for a claim made without a delivery to watch (a catch-up after resubscribing): then only the event log can tell. */
	watched?: WatchedAnswer;
}

const CLAIMS_KEPT = 20_000;
const claims = keptInProcess('events claimed', `${CLAIMS_KEPT} events, a day each`, new Map<string, Claim>());

function claimKey(triggerKey: string, eventId: number): string {
	return `${triggerKey}\n${eventId}`;
}

function current(key: string): Claim | undefined {
	const claim = claims.get(key);
	if (claim && !recent(claim.at)) {
		claims.delete(key);
		return undefined;
	}
	return claim;
}

function record(key: string, watched: WatchedAnswer | undefined): void {
	keepNewest(claims, key, { at: Date.now(), watched }, CLAIMS_KEPT);
}

/** Records that the delivery watched by `watched` runs this event; false when this process claimed it already. */
export function claimEvent(triggerKey: string, eventId: number, watched?: WatchedAnswer): boolean {
	const key = claimKey(triggerKey, eventId);
	if (current(key)) return false;
	record(key, watched);
	return true;
}

/**
 * Claims the event again for this delivery, when the event log shows it never ran: unless a
 * delivery this process watches is running it now, or ran it.
 */
export function claimAgain(triggerKey: string, eventId: number, watched: WatchedAnswer): boolean {
	const key = claimKey(triggerKey, eventId);
	const claim = current(key);
	if (claim?.watched && !refused(claim.watched)) return false;
	record(key, watched);
	return true;
}

export type ClaimedDecision = { kind: 'takeOver'; eventId: number } | { kind: 'repeat' } | { kind: 'wait'; answered: Promise<void> } | { kind: 'askTheLog' };

/**
 * For a delivery whose matching events (oldest first) this process has all claimed: the
 * first one n8n refused to run is claimed again for this delivery; when every one ran (or
 * may have), the delivery is a repeat; while an answer is out, wait for it. Without a
 * watched answer for each, only the event log can tell.
 */
export function decideClaimed(triggerKey: string, eventIds: number[], watched: WatchedAnswer): ClaimedDecision {
	const found = eventIds.map((id) => ({ id, claimed: current(claimKey(triggerKey, id))?.watched }));
	if (found.some(({ claimed }) => !claimed)) return { kind: 'askTheLog' };
	const refusedRun = found.find(({ claimed }) => refused(claimed!));
	if (refusedRun) {
		record(claimKey(triggerKey, refusedRun.id), watched);
		return { kind: 'takeOver', eventId: refusedRun.id };
	}
	const waiting = found.filter(({ claimed }) => pending(claimed!));
	if (waiting.length === 0) return { kind: 'repeat' };
	return { kind: 'wait', answered: Promise.race(waiting.map(({ claimed }) => claimed!.answered)) };
}

/** Lets the next copy claim the event (this delivery will not run it). */
export function releaseClaim(triggerKey: string, eventId: number): void {
	claims.delete(claimKey(triggerKey, eventId));
}

/** Forgets every claim, as when the service's log starts again from id 1 (tests). */
export function forgetClaims(): void {
	claims.clear();
}
