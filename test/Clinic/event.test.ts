import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { errorText, integrationCredentials, jsonOf, useSimulator } from './support';

const t = useSimulator({ deliveryRetryDelayMs: 5, deliveryTimeoutMs: 500 });

const getMany = { resource: 'event', operation: 'getAll' };

/** The paging requests the node made: [offset, limit] of each. */
function pages(): Array<[string, string]> {
	return t.requests().map((request) => [request.query.offset, request.query.limit]);
}

describe('Event > Get Many', () => {
	test('Return All pages through offset/limit in the query until a short page', async () => {
		t.sim.seedEvents(25);
		const result = await t.run({ ...getMany, returnAll: true, pageSize: 10 });

		const ids = jsonOf(result).map((event) => event.id);
		expect(ids).toHaveLength(25);
		expect(new Set(ids).size).toBe(25);
		expect(pages()).toEqual([
			['0', '10'],
			['10', '10'],
			['20', '10'],
		]);
		for (const request of t.requests()) {
			// The parameters travel twice: in the JSON body the spec declares and in the query string.
			expect(request).toMatchObject({
				host: 'webhooks',
				method: 'GET',
				path: '/events',
				body: { offset: Number(request.query.offset), limit: Number(request.query.limit) },
				tokenPlacement: ['header'],
			});
		}
	});

	test('a log that ends on a full page: one more request finds it empty', async () => {
		t.sim.seedEvents(20);
		const result = await t.run({ ...getMany, returnAll: true, pageSize: 10 });

		expect(jsonOf(result)).toHaveLength(20);
		expect(pages()).toEqual([
			['0', '10'],
			['10', '10'],
			['20', '10'],
		]);
	});

	test('Limit stops as soon as it has enough, asking only for what is missing', async () => {
		t.sim.seedEvents(25);
		const result = await t.run({ ...getMany, limit: 15, pageSize: 10 });

		expect(jsonOf(result)).toHaveLength(15);
		expect(pages()).toEqual([
			['0', '10'],
			['10', '5'],
		]);
	});

	test('a service that caps pages below Page Size still gives every event', async () => {
		// The simulator caps pages at 100 events.
		t.sim.seedEvents(230);
		const result = await t.run({ ...getMany, returnAll: true, pageSize: 500 });

		expect(jsonOf(result)).toHaveLength(230);
		expect(pages()).toEqual([
			['0', '500'],
			['100', '500'],
			['200', '500'],
		]);
	});

	test('topic and event name filters: the topic gets the credential\'s prefix', async () => {
		t.sim.seedEvents(3, 'patient', 'patient-created');
		t.sim.seedEvents(2, 'consultation', 'consultation-finished');
		const result = await t.run({
			...getMany,
			returnAll: true,
			filters: { topic: 'consultation', name: 'consultation-finished' },
		});

		expect(jsonOf(result).map((event) => [event.topic, event.name])).toEqual([
			['clinic-38729.consultation', 'consultation-finished'],
			['clinic-38729.consultation', 'consultation-finished'],
		]);
		expect(t.requests()[0].query).toEqual({ topic: 'clinic-38729.consultation', name: 'consultation-finished', offset: '0', limit: '100' });
	});

	test.each(['body', 'query', 'both'] as const)(
		'a service reading the parameters from the %s gets the filters and every page',
		async (mode) => {
			t.sim.setEventParams(mode);
			t.sim.seedEvents(25, 'patient', 'patient-created');
			t.sim.seedEvents(12, 'consultation', 'consultation-finished');
			const result = await t.run({
				...getMany,
				returnAll: true,
				pageSize: 5,
				filters: { topic: 'consultation', name: 'consultation-finished' },
			});

			const events = jsonOf(result);
			expect(events.map((event) => event.id)).toEqual([26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37]);
			expect(t.requests()[1].body).toEqual({ topic: 'clinic-38729.consultation', name: 'consultation-finished', offset: 5, limit: 5 });
		},
	);

	test('a topic filter without a topic prefix in the credential -> says to fill it', async () => {
		const result = await t.run(
			{ ...getMany, filters: { topic: 'patient' } },
			{ credentials: { clinicApi: integrationCredentials(t.sim, { topicPrefix: '' }) } },
		);

		expect(errorText(result)).toContain('The Clinic credential has no Topic Prefix');
	});

	test('the shared secret inside delivery logs is never output', async () => {
		const secret = 'delivery-secret-0123456789';
		await t.run({
			resource: 'webhookSubscription',
			operation: 'create',
			url: 'https://127.0.0.1:1/unreachable',
			event: 'patient:patient-created',
			secret,
		});
		await t.sim.emit('patient', 'patient-created', { id: 1 });
		expect(t.sim.events()[0].logs.length).toBeGreaterThan(0);

		const result = await t.run({ ...getMany, returnAll: true });

		const [event] = jsonOf(result);
		const logs = event.logs as Array<Record<string, unknown>>;
		expect(logs.length).toBeGreaterThan(0);
		for (const log of logs) {
			expect(log).toMatchObject({ hasSecret: true, authentication_data: {}, target_url: 'https://127.0.0.1:1/unreachable' });
		}
		expect(JSON.stringify(result.output)).not.toContain(secret);
	});

	describe('a service that ignores offset', () => {
		let server: http.Server;
		let webhookBaseUrl: string;
		let calls = 0;
		beforeAll(async () => {
			server = http.createServer((_req, res) => {
				calls++;
				res.writeHead(200, { 'content-type': 'application/json' });
				res.end(JSON.stringify([{ id: 1 }, { id: 2 }]));
			});
			await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
			webhookBaseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		});
		afterAll(async () => {
			await new Promise<void>((resolve) => server.close(() => resolve()));
		});

		test('the same page three times -> stops with a clear error instead of looping', async () => {
			const result = await t.run(
				{ ...getMany, returnAll: true, pageSize: 2 },
				{ credentials: { clinicApi: integrationCredentials(t.sim, { webhookBaseUrl }) } },
			);

			expect(result.error?.message).toBe('The event service answered the same page three times: it ignored the offset');
			expect(errorText(result)).toContain('Stopped instead of reading the same events again');
			expect(calls).toBe(3);
		});
	});
});
