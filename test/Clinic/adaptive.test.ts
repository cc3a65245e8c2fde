/**
 * "Parallel Requests: Automatic", the default, against the simulator: order and pairing
 * kept, the pace found by the host limiter (grows on a service that answers well, holds back under
 * its rate limit), the maximum kept across runs, writes that must not overlap sent one at
 * a time, and a stopped run naming the items already sent.
 *
 * How many requests were in flight is read from the host limiter (it counts what it let
 * go, whatever the machine's speed); the simulator's own count only bounds it from above.
 * How fast a run goes is the bench's to say (bench sections 2 and 8), not a test's.
 */
import { MAX_PARALLEL_REQUESTS } from '../../nodes/Clinic/actions/scheduler';
import { INITIAL_WINDOW, limiterFor } from '../../nodes/shared/hostLimiter';
import { CredentialStore } from '../helpers';
import { errorText, itemsOf, jsonOf, useSimulator } from './support';

const harness = useSimulator();
const ids = (count: number) => Array.from({ length: count }, (_, i) => (i % 3) + 1);
const consultationGet = (options: Record<string, string | number> = {}) => ({
	resource: 'consultation',
	operation: 'get',
	consultationId: '={{ $json.id }}',
	options,
});
const refused = () => harness.sim.log.filter((entry) => entry.status === 429).length;
/** The host limiter's count of requests it let go at once. */
const limiter = () => limiterFor(new URL(harness.sim.apiBaseUrl).host).state;

describe('Parallel Requests: Automatic (the default)', () => {
	it('keeps order and pairing, signs in once, and grows past the first few requests on a service that answers well', async () => {
		harness.sim.setLatency(25);
		const input = ids(90);
		const result = await harness.run(consultationGet(), { items: input.map((id) => ({ json: { id } })) });
		const output = itemsOf(result);
		expect(output.map((item) => item.json.id)).toEqual(input);
		expect(output.map((item) => item.pairedItem)).toEqual(input.map((_id, item) => ({ item })));
		expect(harness.sim.tokenRequests()).toBe(1);
		expect(limiter().peak).toBeGreaterThan(8);
	});

	it('signs in once and stores the session once, while the other items wait on that sign-in', async () => {
		harness.sim.setLatency(100);
		const input = ids(600);
		const store = new CredentialStore();
		const save = jest.spyOn(store, 'save');
		const result = await harness.run(consultationGet(), { items: input.map((id) => ({ json: { id } })), store });
		expect(jsonOf(result).map((json) => json.id)).toEqual(input);
		expect(harness.sim.tokenRequests()).toBe(1);
		expect(save).toHaveBeenCalledTimes(1);
	});

	it('grows past its first window of 128 requests in flight while every answer succeeds, to keep n8n busy while answers travel', async () => {
		harness.sim.setLatency(20);
		const input = ids(600);
		const result = await harness.run(consultationGet(), { items: input.map((id) => ({ json: { id } })) });
		expect(jsonOf(result).map((json) => json.id)).toEqual(input);
		expect(limiter().window).toBeGreaterThan(INITIAL_WINDOW);
		expect(limiter().peak).toBeGreaterThan(INITIAL_WINDOW);
		expect(harness.sim.inFlight().peak).toBeLessThanOrEqual(MAX_PARALLEL_REQUESTS);
	});

	it('under a limit of 3 requests in flight, backs off to near it and stays there: every item answered', async () => {
		harness.sim.setLatency(50);
		harness.sim.setRateLimit({ maxInFlight: 3, retryAfterSeconds: 0 });
		const input = ids(300);
		const result = await harness.run(consultationGet(), { items: input.map((id) => ({ json: { id } })) });
		expect(jsonOf(result).map((json) => json.id)).toEqual(input);
		expect(refused()).toBeGreaterThan(0);
		// It backed off from the initial window to near the limit and stayed there: growing
		// back past the size that was refused takes many rounds of successful answers. (How many
		// refusals that costs depends on how answers and sends interleave on a busy machine;
		// bench sections 2 and 8 count them.)
		const { window } = limiter();
		expect(window).toBeGreaterThanOrEqual(1);
		expect(window).toBeLessThanOrEqual(16);
	});

	// 150 items at 50 a second take about 3 s plus whole-second Retry-After waits; the bound is
	// far above that, for a machine busy with other work (a pace is the bench's to measure).
	it('under 50 requests per second: waits out Retry-After for the whole host, then keeps a pace; every item answered', async () => {
		harness.sim.setRateLimit({ requestsPerSecond: 50 });
		const input = ids(150);
		const result = await harness.run(consultationGet(), { items: input.map((id) => ({ json: { id } })) });
		expect(jsonOf(result).map((json) => json.id)).toEqual(input);
		// Each item answered once, plus the sign-in: a refused request was sent again, an answered one never.
		expect(harness.sim.log.filter((entry) => entry.status !== 429)).toHaveLength(151);
		// The requests in flight when the limit is first met are refused (at most the first
		// round, the initial window); after that, few.
		expect(refused()).toBeLessThan(INITIAL_WINDOW + 50);
		expect(harness.sim.log.slice(-60).filter((entry) => entry.status === 429).length).toBeLessThan(5);
	}, 5 * 60_000);

	it('a stopped execution sends nothing more: items not yet sent are dropped, and the error names those already done', async () => {
		harness.sim.setLatency(40);
		const stop = new AbortController();
		const running = harness.run(
			{ resource: 'patient', operation: 'update', patientId: '={{ $json.id }}', additionalFields: { first_name: 'Ana' } },
			{ items: [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3].map((id) => ({ json: { id } })), signal: stop.signal },
		);
		// Stopped while the fourth update is at the service (writes go one at a time).
		while (harness.requests().length < 3 || harness.sim.inFlight().now === 0) await new Promise((resolve) => setTimeout(resolve, 2));
		stop.abort();
		const result = await running;
		await new Promise((resolve) => setTimeout(resolve, 300));
		// Nothing was sent after the stop: the update in flight was the last.
		expect(harness.sim.inFlight().now).toBe(0);
		expect(harness.sim.log.filter((entry) => entry.method === 'PUT').length).toBeLessThanOrEqual(4);
		expect(errorText(result)).toMatch(/stopped before every item was sent/);
		expect(errorText(result)).toMatch(/Items 1-3 had already been sent and done when the run stopped/);
		expect(errorText(result)).toMatch(/Item 4 was being sent: check it at the service/);
	});

	it('never more in flight than Maximum Parallel Requests, even with two runs at once', async () => {
		harness.sim.setLatency(20);
		const items = ids(40).map((id) => ({ json: { id } }));
		const [first, second] = await Promise.all([
			harness.run(consultationGet({ maxParallelRequests: 5 }), { items }),
			harness.run(consultationGet({ maxParallelRequests: 5 }), { items }),
		]);
		expect(jsonOf(first)).toHaveLength(40);
		expect(jsonOf(second)).toHaveLength(40);
		expect(limiter().peak).toBe(5);
		expect(harness.sim.inFlight().peak).toBeLessThanOrEqual(5);
	});

	it('a fixed number is the user\'s: exactly that many at once', async () => {
		harness.sim.setLatency(30);
		await harness.run(consultationGet({ parallelism: 'fixed', parallelRequests: 7 }), { items: ids(21).map((id) => ({ json: { id } })) });
		expect(limiter().peak).toBe(7);
		expect(harness.sim.inFlight().peak).toBeLessThanOrEqual(7);
	});
});

describe('writes under Automatic', () => {
	it('Charge > Add to Invoice goes one item after the other, in input order', async () => {
		harness.sim.setLatency(20);
		const prices = [10, 20, 30, 40, 50, 60];
		const result = await harness.run(
			{ resource: 'charge', operation: 'addToInvoice', invoiceId: '2', quantity: 1, value: '={{ $json.price }}' },
			{ items: prices.map((price) => ({ json: { price } })) },
		);
		expect(jsonOf(result)).toHaveLength(6);
		expect(limiter().peak).toBe(1);
		expect(harness.requests().map((entry) => (entry.body as { consultation_invoice_item?: { value?: unknown } })?.consultation_invoice_item?.value)).toEqual(
			prices.map(String),
		);
	});

	it('Invoice > Email goes in parallel (an e-mail sent again is no damage)', async () => {
		harness.sim.setLatency(30);
		const invoiceIds = Array.from({ length: 30 }, () => 3); // the seeded signed invoice with a patient e-mail
		const result = await harness.run(
			{ resource: 'invoice', operation: 'email', invoiceId: '={{ $json.id }}' },
			{ items: invoiceIds.map((id) => ({ json: { id } })) },
		);
		expect(jsonOf(result).map((json) => json.id)).toEqual(invoiceIds);
		expect(limiter().peak).toBeGreaterThan(4);
	});

	it('a write that fails without On Error: Continue names the items already sent', async () => {
		const result = await harness.run(
			{ resource: 'patient', operation: 'update', patientId: '={{ $json.id }}', additionalFields: { first_name: 'Ana' } },
			{ items: [1, 2, 999, 3].map((id) => ({ json: { id } })) },
		);
		expect(errorText(result)).toMatch(/Items 1 and 2 had already been sent and done when the run stopped/);
		expect(errorText(result)).toMatch(/running the workflow again sends them again/);
		expect(harness.requests().map((entry) => entry.path)).toEqual(['/api/v1/people/1', '/api/v1/people/2', '/api/v1/people/999']);
	});

	it('a read that fails says nothing about items sent (repeating a read changes nothing)', async () => {
		const result = await harness.run(consultationGet({ parallelism: 'fixed', parallelRequests: 1 }), {
			items: [1, 2, 999].map((id) => ({ json: { id } })),
		});
		expect(errorText(result)).toMatch(/Consultation 999 was not found/);
		expect(errorText(result)).not.toMatch(/already been sent/);
	});
});
