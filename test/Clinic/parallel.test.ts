/**
 * The node option "Parallel Requests": items overlap on the wire, yet output order and
 * pairing stay those of the input, one token serves them all, failures stay with their
 * item, and the service's 429 Retry-After is waited out.
 */
import { limiterFor } from '../../nodes/shared/hostLimiter';
import { runClinicRequests } from '../helpers';
import { errorText, integrationCredentials, itemsOf, jsonOf, useSimulator } from './support';

const harness = useSimulator();
const consultationIds = [3, 1, 2, 1, 3, 2, 2, 1, 3, 1, 2, 3];
const items = consultationIds.map((id) => ({ json: { id } }));
const getConsultation = (parallelRequests: number) => ({
	resource: 'consultation',
	operation: 'get',
	consultationId: '={{ $json.id }}',
	options: { parallelRequests },
});

describe('Parallel Requests', () => {
	it('keeps the input order and pairing, with one sign-in for all items', async () => {
		harness.sim.setLatency(30);
		const result = await harness.run(getConsultation(6), { items });
		const output = itemsOf(result);
		expect(output.map((item) => item.json.id)).toEqual(consultationIds);
		expect(output.map((item) => item.pairedItem)).toEqual(consultationIds.map((_id, item) => ({ item })));
		expect(harness.sim.tokenRequests()).toBe(1);
	});

	it('sends requests at the same time (not one after the other)', async () => {
		// Each answer held long enough that requests sent together are all open at once, however slow the machine.
		harness.sim.setLatency(2000);
		harness.sim.clearLog();
		await harness.run(getConsultation(12), { items });
		// The node let all twelve go before any was answered (its host limiter counts what it granted)...
		expect(limiterFor(new URL(harness.sim.apiBaseUrl).host).state.peak).toBe(12);
		// ...and the simulator saw all twelve at the same time (one after the other would be 1).
		expect(harness.sim.inFlight().peak).toBe(12);
	});

	it('with On Error: Continue, a failed item becomes an error item in its own place', async () => {
		const mixed = [{ json: { id: 1 } }, { json: { id: 999 } }, { json: { id: 2 } }, { json: { id: 'abc' } }];
		const result = await harness.run(getConsultation(4), { items: mixed, continueOnFail: true });
		const output = itemsOf(result);
		expect(output.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }, { item: 3 }]);
		expect(output[0].json).toMatchObject({ id: 1 });
		expect(output[1].json.error).toMatch(/Consultation 999 was not found/);
		expect(output[2].json).toMatchObject({ id: 2 });
		expect(output[3].json.error).toMatch(/Consultation ID must be a whole number.*item 4/);
	});

	it('without it, the run stops with the first failing item\'s error', async () => {
		const mixed = [{ json: { id: 1 } }, { json: { id: 2 } }, { json: { id: 998 } }, { json: { id: 999 } }];
		const result = await harness.run(getConsultation(4), { items: mixed });
		expect(errorText(result)).toMatch(/Consultation 998 was not found/);
	});

	it('waits out 429 Retry-After and still answers every item', async () => {
		harness.sim.setRateLimit({ every: 3, retryAfterSeconds: 1 });
		const result = await harness.run(getConsultation(4), { items: items.slice(0, 6) });
		expect(jsonOf(result).map((json) => json.id)).toEqual(consultationIds.slice(0, 6));
		expect(harness.sim.log.filter((entry) => entry.status === 429).length).toBeGreaterThan(0);
	}, 60_000); // each 429 waits a real second: the timeout bounds a hang only

	it('with Parallel Requests 1, each item\'s requests end before the next item\'s begin', async () => {
		// Event Get Many pages: three items, each paging with its own page size.
		harness.sim.seedEvents(25);
		harness.sim.setLatency(15);
		const pageSizes = [10, 12, 9];
		const result = await harness.run(
			{ resource: 'event', operation: 'getAll', returnAll: true, pageSize: '={{ $json.pageSize }}', options: { parallelRequests: 1 } },
			{ items: pageSizes.map((pageSize) => ({ json: { pageSize } })) },
		);
		expect(jsonOf(result)).toHaveLength(75);
		const pages = harness.requests().map((entry) => `${entry.query.offset}/${entry.query.limit}`);
		expect(pages).toEqual(['0/10', '10/10', '20/10', '0/12', '12/12', '24/12', '0/9', '9/9', '18/9']);
	});

	it('an invalid parameter stops the run there: earlier items are sent, later ones are not', async () => {
		harness.sim.setLatency(15);
		const mixed = [{ json: { id: 1 } }, { json: { id: 2 } }, { json: { id: 'abc' } }, { json: { id: 3 } }];
		const result = await harness.run(getConsultation(1), { items: mixed });
		expect(errorText(result)).toMatch(/Consultation ID must be a whole number.*item 3/);
		expect(harness.requests().map((entry) => entry.path)).toEqual(['/api/v1/consultations/1', '/api/v1/consultations/2']);
	});
});


describe('the Retry-After budget counts the wait the request really has', () => {
	it("a request whose own Retry-After is short still waits out the host's longer pause, and that counts toward its budget", async () => {
		// The Clinic node's gate: each request takes a place in the host's limiter.
		const gate = {
			acquire: async (_item: number, to: string, retry: boolean) => await limiterFor(to).acquire({ maximum: 8, adaptive: false }, retry),
			pausedMs: (to: string) => limiterFor(to).pausedMs(),
		};
		harness.sim.addFault({ kind: 'status', host: 'api', path: '/api/v1/consultations/1', status: 429, retryAfterSeconds: 2, count: 1 });
		harness.sim.addFault({ kind: 'status', host: 'api', path: '/api/v1/consultations/2', status: 429, retryAfterSeconds: 1, count: 2 });
		const result = await runClinicRequests({
			authentication: 'clinicApi',
			credentials: { clinicApi: integrationCredentials(harness.sim) },
			items: 2,
			concurrent: true,
			continueOnFail: true,
			gate,
			maxRetryWaitMs: 2500,
			requests: (item) => [{ method: 'GET', path: `/consultations/${item + 1}`, auth: 'integration', subject: `Consultation ${item + 1}` }],
		});
		const [first, second] = (result.output?.[0] ?? []).map((item) => item.json);
		// Consultation 1 waited its 2 s and was answered.
		expect(first).toMatchObject({ statusCode: 200 });
		// Consultation 2 asked for 1 s twice, but its first wait lasted the host's 2 s pause
		// (consultation 1's refusal): 2 + 1 s is past the 2.5 s budget, so it fails instead of waiting on.
		expect(String(second.error)).toMatch(/\(429\)/);
	});
});
