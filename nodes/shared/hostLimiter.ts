/**
 * How many requests may be on their way to one service host at once, for every execution
 * of the Clinic node in this n8n process ("Parallel Requests: Automatic").
 *
 * As TCP's congestion window: the window starts at INITIAL_WINDOW and doubles per round
 * trip of successful answers until the first sign of overload, then grows by one per window's
 * worth; a 429, 503 or timeout halves it (once per round trip), and a Retry-After holds
 * every request to the host until it has passed. A window limits requests in flight, not
 * per second: against a per-second limit a fast service would refuse a whole window at a
 * time, so an overload also teaches a pace (what the service accepted in the second
 * before it, less a tenth), which quickens by a tenth every five seconds.
 */
import { sleep } from 'n8n-workflow';

import { keptInProcess } from '../../credentials/ClinicProcessMemory';

import type { AttemptOutcome } from './requestTypes';

/** A batch of this size goes out in one round trip (300 items at 100 ms need two); a service that takes fewer refuses the first round's excess. */
export const INITIAL_WINDOW = 128;

/** The upper bound of "Maximum Parallel Requests" (at 100 ms round trips 512 kept n8n waiting). */
export const WINDOW_CEILING = 1024;

/** After this long without requests, what was learned is forgotten: limits change. */
export const IDLE_RESET_MS = 60_000;

const PACE_MARGIN = 0.9;
const PACE_QUICKENS_MS = 5000;
const SENDS_KEPT = 2000;
/** Rounds of successful answers before the window grows back to the size that overloaded the service. */
const PROBE_PATIENCE = 8;

/** The node's maximum in flight; not adaptive: a fixed number, held back only by Retry-After. */
export interface LimitOptions {
	maximum: number;
	adaptive: boolean;
}

interface Waiter extends LimitOptions {
	grant: (sequence: number) => void;
}

export class HostLimiter {
	private window = INITIAL_WINDOW;
	/** Below it the window doubles per round trip, above it grows by one per window. */
	private threshold = Infinity;
	/** The window at the last overload: growing back to it takes PROBE_PATIENCE times longer. */
	private overloadedAt = Infinity;
	private answersSinceGrowth = 0;
	private inFlight = 0;
	private peak = 0;
	private readonly queue: Waiter[] = [];
	/** Nothing is sent before this (Retry-After), nor an adaptive request before `nextSendAt` (the pace). */
	private pausedUntil = 0;
	private nextSendAt = 0;
	private waking = false;
	/** Requests granted so far; answers to requests sent before the last cut do not cut again. */
	private granted = 0;
	private grantedAtCut = -1;
	private lastActivity = 0;
	/** When successful answers' requests were sent, to learn a pace from. */
	private acceptedSends: number[] = [];
	private spacing = 0;
	private spacingLearnedAt = 0;

	get state(): { window: number; inFlight: number; peak: number; waiting: number } {
		return { window: this.window, inFlight: this.inFlight, peak: this.peak, waiting: this.queue.length };
	}

	/** How long every request to the host still waits out a Retry-After. */
	pausedMs(): number {
		return Math.max(0, this.pausedUntil - Date.now());
	}

	/** Resolves when the request may be sent, with what to call once its answer (or failure) is in. */
	async acquire(options: LimitOptions, retry = false): Promise<(outcome: AttemptOutcome) => void> {
		if (this.inFlight === 0 && this.queue.length === 0 && Date.now() - this.lastActivity > IDLE_RESET_MS) {
			Object.assign(this, { window: INITIAL_WINDOW, threshold: Infinity, overloadedAt: Infinity, answersSinceGrowth: 0, spacing: 0, acceptedSends: [] });
		}
		const sequence = await new Promise<number>((grant) => {
			// A request sent again after a 429 goes ahead of those not sent yet.
			this.queue[retry ? 'unshift' : 'push']({ ...options, grant });
			this.dispatch();
		});
		const sentAt = Date.now();
		let released = false;
		return (outcome) => {
			if (released) return;
			released = true;
			// Grow only a window in full use: growth nobody used would make a later cut hollow.
			const windowFull = this.inFlight >= this.window;
			this.inFlight--;
			this.lastActivity = Date.now();
			if (outcome.retryAfterMs) this.pausedUntil = Math.max(this.pausedUntil, Date.now() + outcome.retryAfterMs);
			const overloaded = outcome.timedOut || outcome.status === 429 || outcome.status === 503;
			if (overloaded) this.cut(sequence);
			else if (outcome.status !== undefined && outcome.status < 500) this.grow(sentAt, windowFull);
			this.dispatch();
		};
	}

	private grow(sentAt: number, windowFull: boolean): void {
		this.acceptedSends.push(sentAt);
		if (this.acceptedSends.length > 2 * SENDS_KEPT) this.acceptedSends = this.acceptedSends.slice(-SENDS_KEPT);
		if (!windowFull || this.window >= WINDOW_CEILING) return;
		const patience = this.window + 1 >= this.overloadedAt ? PROBE_PATIENCE : 1;
		if (this.window < this.threshold || ++this.answersSinceGrowth >= this.window * patience) {
			this.window = Math.min(WINDOW_CEILING, this.window + 1);
			this.answersSinceGrowth = 0;
			if (this.window >= this.overloadedAt) this.overloadedAt = Infinity;
		}
	}

	private cut(sequence: number): void {
		if (sequence <= this.grantedAtCut) return;
		this.overloadedAt = this.window;
		this.window = Math.max(1, Math.floor(this.window / 2));
		this.threshold = this.window;
		this.answersSinceGrowth = 0;
		this.grantedAtCut = this.granted;
		// A rate limit says when to come back (Retry-After): what the service took in that
		// period (at least a second) before it said "too many" is the most it takes per such
		// period, so send at a little less than that.
		const now = Date.now();
		if (this.pausedUntil <= now || this.acceptedSends.length === 0) return;
		const period = Math.max(1000, this.pausedUntil - now);
		const accepted = this.acceptedSends.filter((at) => at > now - period).length;
		this.spacing = accepted > 0 ? period / (accepted * PACE_MARGIN) : period;
		this.spacingLearnedAt = now;
	}

	/** The learned spacing, quickened by the time since it was learned. */
	private currentSpacing(now: number): number {
		const spacing = this.spacing * Math.pow(PACE_MARGIN, (now - this.spacingLearnedAt) / PACE_QUICKENS_MS);
		return spacing < 1 ? 0 : spacing;
	}

	private dispatch(): void {
		const now = Date.now();
		let wakeAt = this.pausedUntil > now ? this.pausedUntil : 0;
		// In queue order; a request that does not fit leaves later ones of the same maximum
		// waiting too (inFlight only grows during the scan), so one execution keeps its order.
		for (let i = 0; !wakeAt && i < this.queue.length; ) {
			const waiter = this.queue[i];
			if (this.inFlight >= (waiter.adaptive ? Math.min(this.window, waiter.maximum) : Infinity)) {
				i++;
				continue;
			}
			if (waiter.adaptive && now < this.nextSendAt) {
				wakeAt = this.nextSendAt;
				break;
			}
			if (waiter.adaptive) this.nextSendAt = now + this.currentSpacing(now);
			this.queue.splice(i, 1);
			this.inFlight++;
			this.peak = Math.max(this.peak, this.inFlight);
			this.lastActivity = now;
			waiter.grant(++this.granted);
		}
		// One timer, for the moment the pause or the pace lets the next request go.
		if (wakeAt && this.queue.length > 0 && !this.waking) {
			this.waking = true;
			void sleep(wakeAt - now).then(() => {
				this.waking = false;
				this.dispatch();
			});
		}
	}
}

/** One limiter per host (`host:port`) for the whole process, so concurrent executions share it. */
const limiters = keptInProcess('host limiters', 'one per service host', new Map<string, HostLimiter>());

export function limiterFor(host: string): HostLimiter {
	let limiter = limiters.get(host);
	if (!limiter) limiters.set(host, (limiter = new HostLimiter()));
	return limiter;
}
