/**
 * How many requests may be on their way to one service host at once, for every item and
 * every execution of the Clinic node in this n8n process ("Parallel Requests: Automatic").
 *
 * Additive increase, multiplicative decrease, as TCP does with its congestion window:
 * the window starts small, grows by one per healthy answer until the first sign of
 * overload (doubling per round trip; by two, tripling, on a service whose quickest answer
 * takes 50 ms or more), then by one per window's worth of answers (and
 * eight times slower for the last step back to the size that overloaded); a 429,
 * 503 or timeout halves it (once per round trip, not once per refused request), and a
 * Retry-After holds every request to that host until it has passed. The window never
 * grows past what is in use (so a cut is felt at once), and a request is sent only while
 * fewer than both the window and its own maximum are in flight to the host from this
 * process, whichever execution sent them.
 *
 * A window limits requests in flight, not requests per second: against a per-second limit
 * a fast service would refuse a whole window at a time. So an overload also teaches a
 * pace: the requests the service accepted in the second (or Retry-After) before it, less
 * a tenth for safety. Requests are then spaced out at that pace, which quickens by a tenth
 * every five seconds so that a raised limit is found again.
 */
import { sleep } from 'n8n-workflow';

/**
 * Requests in flight to a host before any answer came back. Near TCP's initial window (10,
 * RFC 6928), for the same reason: on a slow service a larger start saves a round trip of
 * doubling, and a service that takes fewer refuses only the first round's excess.
 */
export const INITIAL_WINDOW = 8;

/**
 * The window never grows past this: the upper bound of "Maximum Parallel Requests". Under
 * load n8n takes a while to send each request and to read each answer, and that time
 * counts as in flight: at 100 ms round trips 512 in flight was too few to keep it busy
 * (n8n's HTTP Request node has all of a run's requests in flight at once).
 */
export const WINDOW_CEILING = 1024;

/** After this long without requests, what was learned is forgotten: limits change. */
export const IDLE_RESET_MS = 60_000;

/** Share of the pace the service accepted before an overload that is kept. */
const PACE_MARGIN = 0.9;

/** The pace quickens by a tenth per this many ms without an overload. */
const PACE_QUICKENS_MS = 5000;

/**
 * A service whose quickest answer takes this long is slow: each round trip of the slow start
 * costs real time there, so the window triples per round trip instead of doubling (as BBR's
 * start-up, which about triples its rate per round trip).
 */
export const SLOW_ROUND_TRIP_MS = 50;

/** Rounds of healthy answers before the window grows back to the size that overloaded the service. */
const PROBE_PATIENCE = 8;

/** Send times of healthy answers kept for learning a pace. */
const SENDS_KEPT = 10_000;

/** How a request ended, for the window. */
export type RequestOutcome = 'healthy' | 'overloaded' | 'neutral';

/** 429 and 503 say "too much"; other answers say the service copes. */
export function outcomeOfStatus(statusCode: number): RequestOutcome {
	if (statusCode === 429 || statusCode === 503) return 'overloaded';
	return statusCode >= 500 ? 'neutral' : 'healthy';
}

export interface AcquireOptions {
	/** Most requests in flight to the host (the node's maximum). */
	maximum: number;
	/** false: a fixed number chosen by the user; only Retry-After holds the request back. */
	adaptive: boolean;
	/** A request sent again after a 429 goes ahead of those not sent yet. */
	retry?: boolean;
}

export interface Permit {
	/** Call once, when the answer (or the failure) is in. */
	release(outcome: RequestOutcome): void;
}

interface Waiter extends AcquireOptions {
	grant: () => void;
}

export class HostLimiter {
	/** Requests allowed in flight. */
	private window = INITIAL_WINDOW;

	/** The window at the last overload: growing back to it takes PROBE_PATIENCE times longer. */
	private overloadedAt = Infinity;

	/** Healthy answers since the window last grew by one, above the growth threshold. */
	private answersSinceGrowth = 0;

	/** Below it the window grows by one per answer, above it by one per window. */
	private growthThreshold = Infinity;

	private inFlight = 0;

	/** Most requests seen in flight at once (for tests and diagnostics). */
	private peak = 0;

	private readonly queue: Waiter[] = [];

	/** Epoch ms before which nothing is sent (Retry-After). */
	private pausedUntil = 0;

	/** A sleep until the pause ends is under way. */
	private waking = false;

	/** Requests granted so far; each permit remembers its number. */
	private granted = 0;

	/** `granted` when the window was last cut: answers to requests sent before do not cut it again. */
	private grantedAtCut = -1;

	/** When the last request ended or started. */
	private lastActivity = 0;

	/** When healthy answers' requests were sent (recent ones), to learn a pace from. */
	private healthySends: number[] = [];

	/** ms between two sends learned at the last overload (0: no pace), and when. */
	private spacing = 0;
	private spacingLearnedAt = 0;

	/** No adaptive request is sent before this (the pace). */
	private nextSendAt = 0;

	/** The quickest healthy answer so far: the service's round trip, without n8n's own delays. */
	private quickestAnswerMs = Infinity;

	get state(): { window: number; inFlight: number; peak: number; waiting: number; pausedForMs: number } {
		return {
			window: this.window,
			inFlight: this.inFlight,
			peak: this.peak,
			waiting: this.queue.length,
			pausedForMs: Math.max(0, this.pausedUntil - Date.now()),
		};
	}

	/** Resolves when the request may be sent. */
	async acquire(options: AcquireOptions): Promise<Permit> {
		if (this.inFlight === 0 && this.queue.length === 0 && Date.now() - this.lastActivity > IDLE_RESET_MS) {
			this.window = INITIAL_WINDOW;
			this.growthThreshold = Infinity;
			this.answersSinceGrowth = 0;
			this.spacing = 0;
			this.healthySends = [];
			this.overloadedAt = Infinity;
			this.quickestAnswerMs = Infinity;
		}
		const sent = await new Promise<{ number: number; at: number }>((resolve) => {
			const waiter: Waiter = { ...options, grant: () => resolve({ number: ++this.granted, at: Date.now() }) };
			if (options.retry) this.queue.unshift(waiter);
			else this.queue.push(waiter);
			this.dispatch();
		});
		let released = false;
		return {
			release: (outcome) => {
				if (released) return;
				released = true;
				// Grow only a window in full use: growth nobody used would make a later cut hollow.
				const windowFull = this.inFlight >= this.window;
				this.inFlight--;
				this.lastActivity = Date.now();
				this.record(outcome, sent.number, sent.at, windowFull);
				this.dispatch();
			},
		};
	}

	/** No request to the host starts for `ms` (a Retry-After), counted from now. */
	pause(ms: number): void {
		const until = Date.now() + Math.max(0, ms);
		if (until <= this.pausedUntil) return;
		this.pausedUntil = until;
		void this.wakeLater();
	}

	/** Dispatches again once the pause, or the pace, lets the next request go. */
	private async wakeLater(): Promise<void> {
		if (this.waking) return;
		this.waking = true;
		// The pause may grow while we sleep.
		for (let until = this.holdUntil(); Date.now() < until; until = this.holdUntil()) await sleep(until - Date.now());
		this.waking = false;
		this.dispatch();
	}

	private holdUntil(): number {
		return Math.max(this.pausedUntil, this.queue.some((waiter) => waiter.adaptive) ? this.nextSendAt : 0);
	}

	/** The learned spacing, quickened by the time since it was learned. */
	private currentSpacing(now: number): number {
		if (this.spacing === 0) return 0;
		const spacing = this.spacing * Math.pow(PACE_MARGIN, (now - this.spacingLearnedAt) / PACE_QUICKENS_MS);
		return spacing < 1 ? 0 : spacing;
	}

	private record(outcome: RequestOutcome, number: number, sentAt: number, windowFull: boolean): void {
		const now = Date.now();
		if (outcome === 'healthy') {
			this.quickestAnswerMs = Math.min(this.quickestAnswerMs, now - sentAt);
			this.healthySends.push(sentAt);
			if (this.healthySends.length >= 2 * SENDS_KEPT) this.healthySends = this.healthySends.slice(-SENDS_KEPT);
			if (!windowFull || this.window >= WINDOW_CEILING) return;
			// Back up to the window that overloaded the service only after many quiet rounds.
			const patience = this.window + 1 >= this.overloadedAt ? PROBE_PATIENCE : 1;
			const slowStart = this.window < this.growthThreshold;
			if (slowStart || ++this.answersSinceGrowth >= this.window * patience) {
				// Before the first overload on a slow service, tripling per round trip.
				const step = slowStart && this.growthThreshold === Infinity && this.quickestAnswerMs >= SLOW_ROUND_TRIP_MS ? 2 : 1;
				this.window = Math.min(WINDOW_CEILING, this.window + step);
				this.answersSinceGrowth = 0;
				if (this.window >= this.overloadedAt) this.overloadedAt = Infinity;
			}
		} else if (outcome === 'overloaded' && number > this.grantedAtCut) {
			this.overloadedAt = this.window;
			this.window = Math.max(1, Math.floor(this.window / 2));
			this.growthThreshold = this.window;
			this.answersSinceGrowth = 0;
			this.grantedAtCut = this.granted;
			this.learnPace(now);
		}
	}

	/**
	 * What the service took in the Retry-After period (at least a second) before it said
	 * "too many" is the most it takes per such period: send at a little less than that.
	 */
	private learnPace(now: number): void {
		const period = Math.max(1000, this.pausedUntil - now);
		// Sending for less than the period says nothing about what the service takes per period.
		if (this.healthySends.length === 0 || this.healthySends[0] > now - period) return;
		const accepted = this.healthySends.filter((at) => at > now - period).length;
		this.spacing = accepted > 0 ? period / (accepted * PACE_MARGIN) : period;
		this.spacingLearnedAt = now;
	}

	private dispatch(): void {
		const now = Date.now();
		if (now < this.pausedUntil) {
			void this.wakeLater();
			return;
		}
		// In queue order; a request that does not fit leaves later ones of the same maximum
		// waiting too (inFlight only grows during the scan), so one execution keeps its order.
		for (let i = 0; i < this.queue.length; ) {
			const waiter = this.queue[i];
			const limit = waiter.adaptive ? Math.min(this.window, waiter.maximum) : Infinity;
			if (this.inFlight >= limit) {
				i++;
				continue;
			}
			if (waiter.adaptive) {
				if (now < this.nextSendAt) {
					void this.wakeLater();
					i++;
					continue;
				}
				this.nextSendAt = now + this.currentSpacing(now);
			}
			this.queue.splice(i, 1);
			this.inFlight++;
			this.peak = Math.max(this.peak, this.inFlight);
			this.lastActivity = now;
			waiter.grant();
		}
	}
}

/**
 * One limiter per host (`host:port`) for the whole process: module state, so concurrent
 * executions (and a worker's `--concurrency` executions) share it.
 */
const limiters = new Map<string, HostLimiter>();

export function limiterFor(host: string): HostLimiter {
	let limiter = limiters.get(host);
	if (!limiter) {
		limiter = new HostLimiter();
		limiters.set(host, limiter);
	}
	return limiter;
}

/** Forgets every host's limiter (tests start from a fresh process's state). */
export function resetHostLimiters(): void {
	limiters.clear();
}
