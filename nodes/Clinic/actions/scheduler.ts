/**
 * When each item's requests go out: "Parallel Requests", the host's limiter, and reading
 * items ahead while earlier requests travel (the router sees `forEachItem` and `stopAfter`,
 * the client the RequestGate). Items take turns in input order, at most `turns` at a time:
 * with 1, every item's requests end before the next item's begin.
 */
import { sleep } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import { WINDOW_CEILING, limiterFor } from '../../shared/hostLimiter';
import type { LimitOptions } from '../../shared/hostLimiter';
import type { AttemptOutcome, RequestGate } from '../../shared/requestTypes';
import { writeMode } from './writes';

export const MAX_PARALLEL_REQUESTS = WINDOW_CEILING;

/** An item that had not had its turn when an earlier item failed or the execution was stopped. */
export class TurnCancelled extends Error {}

/** Items started back to back before answers are handled again (back to back costs n8n less per item). */
const START_BATCH = 16;

function clampParallel(value: unknown, fallback: number): number {
	return Math.min(Math.max(Math.floor(Number(value)) || fallback, 1), MAX_PARALLEL_REQUESTS);
}

export class ItemScheduler implements RequestGate {
	private readonly turns: number;
	private readonly limit: LimitOptions;
	private readonly holders = new Set<number>();
	private readonly waiting = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
	/** Items that ended before asking for a turn (e.g. a parameter was invalid). */
	private readonly endedEarly = new Set<number>();
	/** The lowest item that has neither had its turn nor ended. */
	private next = 0;
	/** Items above this one get no turn: an item failed and the run stops there. */
	private lastAllowed = Infinity;
	/** Set when the execution is stopped (n8n's Stop button, a workflow timeout): nothing more goes out. */
	private readonly cancelSignal: AbortSignal | undefined;

	/**
	 * Automatic (the default) lets the host's limiter find the pace, up to the maximum, and
	 * sends writes that must not overlap one at a time; a fixed number is the user's own
	 * choice for every operation. A workflow saved with only a number keeps it.
	 */
	constructor(ctx: IExecuteFunctions, resource: string, operation: string) {
		const options = ctx.getNodeParameter('options', 0, {}) as { parallelism?: string; parallelRequests?: number; maxParallelRequests?: number };
		const fixed = (options.parallelism ?? (options.parallelRequests !== undefined ? 'fixed' : 'automatic')) === 'fixed';
		if (fixed) {
			this.turns = clampParallel(options.parallelRequests, 1);
			this.limit = { maximum: this.turns, adaptive: false };
		} else {
			const maximum = clampParallel(options.maxParallelRequests, MAX_PARALLEL_REQUESTS);
			this.turns = writeMode(resource, operation) === 'oneAtATime' ? 1 : maximum;
			this.limit = { maximum, adaptive: true };
		}
		this.cancelSignal = ctx.getExecutionCancelSignal?.();
		this.cancelSignal?.addEventListener('abort', () => this.stopAfter(-1), { once: true });
	}

	/** True once the execution was stopped. */
	get cancelled(): boolean {
		return this.cancelSignal?.aborted === true;
	}

	/**
	 * Runs `run` for items 0..count-1, a little ahead of their turns, until every item ended
	 * or `stopAfter` was called. Starts a batch, then lets answers be handled before the next.
	 */
	async forEachItem(count: number, run: (itemIndex: number) => Promise<void>): Promise<void> {
		const readAhead = 2 * this.turns + 2;
		const running = new Set<Promise<void>>();
		let slotFreed: (() => void) | undefined;
		for (let next = 0; next < count && next <= this.lastAllowed; ) {
			for (let started = 0; started < START_BATCH && running.size < readAhead && next < count; started++) {
				const itemIndex = next++;
				const item = run(itemIndex).finally(() => {
					running.delete(item);
					this.end(itemIndex);
					slotFreed?.();
				});
				running.add(item);
			}
			if (running.size < readAhead) await sleep(0);
			else await new Promise<void>((resolve) => (slotFreed = resolve));
		}
		await Promise.all(running);
	}

	/** No turns for items after this one; those already waiting are told so. */
	stopAfter(itemIndex: number): void {
		this.lastAllowed = Math.min(this.lastAllowed, itemIndex);
		for (const [index, waiter] of this.waiting) {
			if (index <= this.lastAllowed) continue;
			this.waiting.delete(index);
			waiter.reject(new TurnCancelled());
		}
	}

	/** How long the host's limiter holds every request (a Retry-After). */
	pausedMs(host: string): number {
		return limiterFor(host).pausedMs();
	}

	/** The item's turn, then a place in the host's limiter. */
	async acquire(itemIndex: number, host: string, retry: boolean): Promise<(outcome: AttemptOutcome) => void> {
		await this.take(itemIndex);
		const release = await limiterFor(host).acquire(this.limit, retry);
		if (!this.cancelled) return release;
		// Stopped while this request waited for the host: it is not sent.
		release({});
		throw new TurnCancelled();
	}

	/** Resolves once the item holds a turn; an item keeps its turn until it ends. */
	private async take(itemIndex: number): Promise<void> {
		// An item past its turn has nothing to wait for (and must not wait forever).
		if (this.holders.has(itemIndex) || itemIndex < this.next) return;
		if (itemIndex > this.lastAllowed) throw new TurnCancelled();
		const turn = new Promise<void>((resolve, reject) => this.waiting.set(itemIndex, { resolve, reject }));
		this.handOut();
		await turn;
	}

	/** The item is done (answered, failed or never asked): its turn passes on. */
	private end(itemIndex: number): void {
		if (!this.holders.delete(itemIndex) && itemIndex >= this.next) this.endedEarly.add(itemIndex);
		this.handOut();
	}

	private handOut(): void {
		while (this.holders.size < this.turns) {
			if (this.endedEarly.delete(this.next)) {
				this.next++;
				continue;
			}
			const waiter = this.waiting.get(this.next);
			if (!waiter) return;
			this.waiting.delete(this.next);
			this.holders.add(this.next++);
			waiter.resolve();
		}
	}
}
