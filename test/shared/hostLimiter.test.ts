/**
 * The host limiter behind "Parallel Requests: Automatic": it starts with a batch of
 * requests, doubles while answers succeed, halves on 429/503/timeouts, holds everything
 * during a Retry-After, and never lets more than a request's maximum be in flight.
 */
import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { HostLimiter, INITIAL_WINDOW, WINDOW_CEILING, limiterFor } from '../../nodes/shared/hostLimiter';
import type { LimitOptions } from '../../nodes/shared/hostLimiter';
import type { AttemptOutcome } from '../../nodes/shared/requestTypes';

type Release = (outcome: AttemptOutcome) => void;
const SUCCESS: AttemptOutcome = { status: 200 };
const OVERLOADED: AttemptOutcome = { status: 429 };
const NEUTRAL: AttemptOutcome = { status: 500 };

/** Lets pending promise callbacks run. */
const settle = async () => {
	for (let i = 0; i < 5; i++) await Promise.resolve();
};

/** Asks for `count` places; `granted` fills as they are granted, in grant order. */
function ask(limiter: HostLimiter, count: number, options: LimitOptions = { maximum: 4 * INITIAL_WINDOW, adaptive: true }) {
	const granted: Array<{ index: number; release: Release }> = [];
	for (let index = 0; index < count; index++) {
		void limiter.acquire(options).then((release) => granted.push({ index, release }));
	}
	return granted;
}

/** Releases every granted place not released yet, with `outcome`. */
function answerAll(granted: Array<{ release: Release }>, from: number, outcome: AttemptOutcome = SUCCESS): number {
	const list = granted.slice(from);
	for (const { release } of list) release(outcome);
	return from + list.length;
}

/** Requests in flight before any answer (the window doubles per round trip from there). */
const IW = INITIAL_WINDOW;

beforeEach(() => jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') }));
afterEach(() => jest.useRealTimers());

describe('HostLimiter', () => {
	test(`starts with ${INITIAL_WINDOW} requests in flight, the others wait in order`, async () => {
		const limiter = new HostLimiter();
		const granted = ask(limiter, IW + 6);
		await settle();
		expect(granted.map((g) => g.index)).toEqual([...Array(IW).keys()]);
		expect(limiter.state).toMatchObject({ inFlight: IW, waiting: 6 });
		granted[0].release(SUCCESS);
		await settle();
		expect(granted.map((g) => g.index)).toEqual([...Array(IW + 2).keys()]); // one freed, one grown
	});

	test('grows while answers succeed: doubling per round trip until the maximum', async () => {
		const limiter = new HostLimiter();
		const granted = ask(limiter, 20 * IW, { maximum: 6 * IW, adaptive: true });
		const perRound: number[] = [];
		let released = 0;
		for (let round = 0; round < 5; round++) {
			await settle();
			perRound.push(granted.length - released);
			released = answerAll(granted, released);
		}
		expect(perRound).toEqual([IW, 2 * IW, 4 * IW, 6 * IW, 6 * IW]);
		expect(limiter.state.peak).toBe(6 * IW);
	});

	test('halves on "too many requests", once per round trip however many requests are refused', async () => {
		const limiter = new HostLimiter();
		const granted = ask(limiter, 10 * IW, { maximum: 10 * IW, adaptive: true });
		let released = 0;
		for (let round = 0; round < 2; round++) {
			await settle();
			released = answerAll(granted, released);
		}
		await settle();
		expect(limiter.state.window).toBe(4 * IW);
		// All in flight are refused: one cut, not one per refusal.
		released = answerAll(granted, released, OVERLOADED);
		await settle();
		expect(limiter.state.window).toBe(2 * IW);
		expect(granted.length - released).toBe(2 * IW);
		// A refusal of a request sent after the cut cuts again.
		granted[released].release(OVERLOADED);
		await settle();
		expect(limiter.state.window).toBe(IW);
	});

	test('after a cut it grows by one per window of successful answers', async () => {
		const limiter = new HostLimiter();
		const granted = ask(limiter, 20 * IW, { maximum: 20 * IW, adaptive: true });
		let released = 0;
		await settle();
		released = answerAll(granted, released);
		await settle();
		expect(limiter.state.window).toBe(2 * IW);
		released = answerAll(granted, released, OVERLOADED); // halved
		await settle();
		expect(limiter.state.window).toBe(IW);
		const windows: number[] = [];
		for (let round = 0; round < 4; round++) {
			released = answerAll(granted, released);
			await settle();
			windows.push(limiter.state.window);
		}
		expect(windows).toEqual([IW + 1, IW + 2, IW + 3, IW + 4]);
	});

	test('a 503 and a timeout cut the window; a 500 and a network failure neither cut nor grow it', async () => {
		for (const [outcome, window] of [
			[{ status: 503 }, IW / 2],
			[{ timedOut: true }, IW / 2],
			[{ status: 500 }, IW],
			[{}, IW],
		] as Array<[AttemptOutcome, number]>) {
			const limiter = new HostLimiter();
			const granted = ask(limiter, IW);
			await settle();
			answerAll(granted, 0, outcome);
			expect(limiter.state.window).toBe(window);
		}
	});

	test('Retry-After holds every request to the host until it has passed, then retries go first', async () => {
		const limiter = new HostLimiter();
		const granted = ask(limiter, IW + 6);
		await settle();
		granted[0].release({ status: 429, retryAfterMs: 2000 }); // window halved, IW - 1 in flight
		await settle();
		expect(granted).toHaveLength(IW); // paused: nothing new although a permit came free
		let retried = false;
		void limiter.acquire({ maximum: 4 * IW, adaptive: true }, true).then(() => (retried = true));
		// Room for one more under the halved window.
		for (let i = 1; i <= IW / 2; i++) granted[i].release(NEUTRAL);
		jest.advanceTimersByTime(1999);
		await settle();
		expect(granted).toHaveLength(IW);
		expect(retried).toBe(false);
		await jest.advanceTimersByTimeAsync(1);
		await settle();
		// The retry went out ahead of the six waiting since the start; nothing else fits.
		expect(retried).toBe(true);
		expect(granted).toHaveLength(IW);
		expect(limiter.state).toMatchObject({ window: IW / 2, inFlight: IW / 2, waiting: 6 });
	});

	test('a longer Retry-After extends the pause, a shorter one does not cut it short', async () => {
		const limiter = new HostLimiter();
		const first = ask(limiter, 3);
		await settle();
		first[0].release({ status: 429, retryAfterMs: 1000 });
		first[1].release({ status: 429, retryAfterMs: 3000 });
		first[2].release({ status: 429, retryAfterMs: 500 });
		const granted = ask(limiter, 1);
		await jest.advanceTimersByTimeAsync(2999);
		expect(granted).toHaveLength(0);
		await jest.advanceTimersByTimeAsync(1);
		await settle();
		expect(granted).toHaveLength(1);
	});

	test('never more in flight than the request\'s maximum, and never past the ceiling', async () => {
		const limiter = new HostLimiter();
		const maximum = IW + 2;
		const granted = ask(limiter, 10 * IW, { maximum, adaptive: true });
		let released = 0;
		for (let round = 0; round < 20; round++) {
			await settle();
			expect(granted.length - released).toBeLessThanOrEqual(maximum);
			released = answerAll(granted, released);
		}
		expect(limiter.state.peak).toBe(maximum);
		// Growth nobody used does not happen: a later cut is felt at once.
		expect(limiter.state.window).toBeLessThanOrEqual(maximum + 1);

		const wide = new HostLimiter();
		const many = ask(wide, 4 * WINDOW_CEILING, { maximum: 4 * WINDOW_CEILING, adaptive: true });
		let done = 0;
		for (let round = 0; round < 12; round++) {
			await settle();
			done = answerAll(many, done);
		}
		expect(wide.state.peak).toBe(WINDOW_CEILING);
	});

	test('two executions share one count: together they stay within the maximum, and both finish', async () => {
		const limiter = new HostLimiter();
		const first = ask(limiter, 60, { maximum: 8, adaptive: true });
		const second = ask(limiter, 60, { maximum: 8, adaptive: true });
		let firstDone = 0;
		let secondDone = 0;
		for (let round = 0; round < 30; round++) {
			await settle();
			expect(first.length - firstDone + (second.length - secondDone)).toBeLessThanOrEqual(8);
			firstDone = answerAll(first, firstDone);
			secondDone = answerAll(second, secondDone);
		}
		expect(limiter.state.peak).toBe(8);
		expect([first.length, second.length]).toEqual([60, 60]);
	});

	test('a fixed number is not held back by the window, only by Retry-After', async () => {
		const limiter = new HostLimiter();
		const granted = ask(limiter, 10, { maximum: 10, adaptive: false });
		await settle();
		expect(granted).toHaveLength(10);
		granted[0].release({ status: 429, retryAfterMs: 1000 });
		const later = ask(limiter, 1, { maximum: 10, adaptive: false });
		await settle();
		expect(later).toHaveLength(0);
		await jest.advanceTimersByTimeAsync(1000);
		await settle();
		expect(later).toHaveLength(1);
	});

	test('one limiter per host for the whole process, forgotten after a minute idle', async () => {
		forgetProcessMemory();
		expect(limiterFor('api.example.test')).toBe(limiterFor('api.example.test'));
		expect(limiterFor('api.example.test')).not.toBe(limiterFor('webhooks.example.test'));
		const limiter = limiterFor('api.example.test');
		const granted = ask(limiter, IW);
		await settle();
		answerAll(granted, 0, OVERLOADED);
		expect(limiter.state.window).toBe(IW / 2);
		jest.setSystemTime(Date.now() + 61_000);
		const fresh = ask(limiter, IW + 10);
		await settle();
		expect(fresh).toHaveLength(INITIAL_WINDOW);
	});
});
