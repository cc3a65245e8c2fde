/**
 * Which logged events this n8n process started a run for, per trigger (kept a day), and
 * how n8n answered the delivery that started it. n8n answers a delivery that starts a run
 * once the run is stored (2.x) or taken (1.x): a 2xx means the event ran; any other answer
 * means it did not, and a copy of the event may run it instead. A copy that arrives while
 * that answer is still out waits for it rather than ask the event log, which cannot show
 * a delivery that is not answered yet.
 */
import type { IWebhookFunctions } from 'n8n-workflow';

import { keptInProcess } from '../../credentials/ClinicProcessMemory';

interface Claim {
	/**
	 * How n8n answered the delivery that claimed the event: undefined while it has not
	 * answered, null when the connection closed without an answer (the run may have started).
	 */
	status?: number | null;
	/** Settles when n8n answered; absent when the run was not started by a delivery this process watched. */
	answered?: Promise<void>;
}

const CLAIMS_KEPT = 20_000;
const CLAIMED_FOR_MS = 24 * 60 * 60_000;
const claims = keptInProcess('events claimed', `${CLAIMS_KEPT} events, a day each`, new Map<string, Claim & { at: number }>());

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

function record(key: string): void {
	// Most recently claimed last: the first key is the one to drop.
	claims.delete(key);
	claims.set(key, { at: Date.now() });
	if (claims.size > CLAIMS_KEPT) claims.delete(claims.keys().next().value as string);
}

/** Records that the trigger runs this event now; false when this process claimed it already. */
export function claimEvent(triggerKey: string, eventId: number): boolean {
	const key = claimKey(triggerKey, eventId);
	if (current(key)) return false;
	record(key);
	return true;
}

/** Claims the event again after n8n refused the run that claimed it (synchronous: one copy takes it). */
export function claimAgain(triggerKey: string, eventId: number): void {
	record(claimKey(triggerKey, eventId));
}

/** Watches how n8n answers this delivery, which claimed `eventId`. */
export function watchAnswer(ctx: IWebhookFunctions, triggerKey: string, eventId: number): void {
	const claim = claims.get(claimKey(triggerKey, eventId));
	if (!claim || claim.answered) return;
	const res = ctx.getResponseObject();
	claim.answered = new Promise<void>((resolve) => {
		res.once('finish', () => {
			claim.status = res.statusCode;
			resolve();
		});
		res.once('close', () => {
			claim.status ??= res.writableFinished ? res.statusCode : null;
			resolve();
		});
	});
}

export type ClaimedDecision = { kind: 'takeOver'; eventId: number } | { kind: 'repeat' } | { kind: 'wait'; answered: Promise<void> } | { kind: 'askTheLog' };

const stored = (status: number | null | undefined) => status === null || (status !== undefined && status >= 200 && status < 300);

/**
 * For a delivery whose matching events (oldest first) this process has all claimed: the
 * first one n8n refused to run is taken over; when every one ran (or may have), the
 * delivery is a repeat; while an answer is out, wait for it. Without a watched answer for
 * each, only the event log can tell.
 */
export function decideClaimed(triggerKey: string, eventIds: number[]): ClaimedDecision {
	const found = eventIds.map((id) => ({ id, claim: current(claimKey(triggerKey, id)) }));
	if (found.some(({ claim }) => !claim?.answered)) return { kind: 'askTheLog' };
	const refused = found.find(({ claim }) => claim!.status !== undefined && !stored(claim!.status));
	if (refused) {
		claimAgain(triggerKey, refused.id);
		return { kind: 'takeOver', eventId: refused.id };
	}
	const pending = found.filter(({ claim }) => claim!.status === undefined);
	if (pending.length === 0) return { kind: 'repeat' };
	return { kind: 'wait', answered: Promise.race(pending.map(({ claim }) => claim!.answered!)) };
}

/** Forgets every claim, as when the service's log starts again from id 1 (tests). */
export function forgetClaims(): void {
	claims.clear();
}
