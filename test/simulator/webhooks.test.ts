import { fullTopic } from '../../nodes/shared/catalog';
import { startSimulator, type Simulator } from './index';
import { accessToken, bearer, request } from './testing';

let sim: Simulator;
let token: string;

beforeAll(async () => {
	sim = await startSimulator();
	token = await accessToken(sim);
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => sim.reset());

const CALLBACK = 'https://n8n.example.test/webhook/abc?event=patient-updated';

function webhookBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
	return {
		url: CALLBACK,
		topic: fullTopic(sim.topicPrefix, 'patient'),
		event_name: 'patient-updated',
		authentication_data: { secret: 's3cret-value' },
		service_access_token: token,
		...overrides,
	};
}

const postWebhook = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
	request(`${sim.webhooksBaseUrl}/webhooks`, { method: 'POST', body, headers });

describe('POST /webhooks', () => {
	test('with the token in the body: 201 and the subscription, enabled', async () => {
		const answer = await postWebhook(webhookBody());
		expect(answer.status).toBe(201);
		expect(answer.json).toEqual({
			webhook: {
				id: expect.any(Number),
				organization_id: 38729,
				url: CALLBACK,
				event_topic: 'clinic-38729.patient',
				event_name: 'patient-updated',
				authentication_data: { secret: 's3cret-value' },
				status: 'enabled',
				created_at: expect.any(String),
				deleted_at: null,
			},
		});
	});

	test('the token in the Authorization header alone -> 401', async () => {
		const { service_access_token: _, ...withoutToken } = webhookBody();
		const answer = await postWebhook(withoutToken, bearer(token));
		expect(answer.status).toBe(401);
		expect(answer.json).toEqual({ error: 'Unauthorized' });
		expect(sim.subscriptions()).toHaveLength(0);
	});

	test('a bare topic suffix or another organisation prefix -> 422', async () => {
		for (const topic of ['patient', 'clinic-11111.patient', 'clinic-38729.patients', 'clinic-38729.']) {
			const answer = await postWebhook(webhookBody({ topic }));
			expect(answer.status).toBe(422);
			expect(answer.json.errors.topic).toEqual([expect.any(String)]);
		}
	});

	test('event names must be spelled exactly as the topic has them -> 422 otherwise', async () => {
		const schedule = fullTopic(sim.topicPrefix, 'consultation-schedule');
		const wrong = await postWebhook(webhookBody({ topic: schedule, event_name: 'consultation-schedule-created' }));
		expect(wrong.status).toBe(422);
		expect(wrong.json.errors.event_name[0]).toContain('consultation-schedule-create');
		const right = await postWebhook(webhookBody({ topic: schedule, event_name: 'consultation-schedule-create' }));
		expect(right.status).toBe(201);

		const prescription = fullTopic(sim.topicPrefix, 'prescription');
		expect((await postWebhook(webhookBody({ topic: prescription, event_name: 'prescription-cancelled' }))).status).toBe(422);
		// an event of another topic
		expect((await postWebhook(webhookBody({ event_name: 'invoice-updated' }))).status).toBe(422);
		// 'created' alone belongs to the account topic only
		expect((await postWebhook(webhookBody({ event_name: 'created' }))).status).toBe(422);
		const account = fullTopic(sim.topicPrefix, 'account');
		expect((await postWebhook(webhookBody({ topic: account, event_name: 'created' }))).status).toBe(201);
	});

	test('http callbacks are refused by default, even on loopback', async () => {
		for (const url of ['http://127.0.0.1:5678/webhook/abc', 'http://n8n.example.test/webhook/abc']) {
			const answer = await postWebhook(webhookBody({ url }));
			expect(answer.status).toBe(422);
			expect(answer.json.errors.url).toEqual(['must be an HTTPS URL']);
		}
	});

	test('allowHttpCallbacks accepts http only for loopback hosts', async () => {
		const local = await startSimulator({ allowHttpCallbacks: true });
		try {
			const localToken = await accessToken(local);
			const post = (url: string) =>
				request(`${local.webhooksBaseUrl}/webhooks`, {
					method: 'POST',
					body: { ...webhookBody({ url }), service_access_token: localToken },
				});
			expect((await post('http://127.0.0.1:5678/webhook/abc')).status).toBe(201);
			expect((await post('http://localhost:5678/webhook/abc')).status).toBe(201);
			expect((await post('http://n8n.example.test/webhook/abc')).status).toBe(422);
			expect((await post('ftp://127.0.0.1/webhook')).status).toBe(422);
		} finally {
			await local.close();
		}
	});

	test('an empty secret or a missing URL -> 422', async () => {
		const answer = await postWebhook(webhookBody({ url: undefined, authentication_data: { secret: '' } }));
		expect(answer.status).toBe(422);
		expect(Object.keys(answer.json.errors).sort()).toEqual(['authentication_data.secret', 'url']);
	});
});

describe('GET /webhooks and DELETE /webhooks/{id}', () => {
	test('list takes the bearer header; a body token is not enough', async () => {
		await postWebhook(webhookBody());
		const listed = await request(`${sim.webhooksBaseUrl}/webhooks`, { headers: bearer(token) });
		expect(listed.status).toBe(200);
		expect(listed.json.webhooks).toHaveLength(1);
		const bodyOnly = await request(`${sim.webhooksBaseUrl}/webhooks`, { body: { service_access_token: token } });
		expect(bodyOnly.status).toBe(401);
	});

	test('delete takes the token in the JSON body; a bearer header alone -> 401', async () => {
		const { id } = (await postWebhook(webhookBody())).json.webhook;
		const url = `${sim.webhooksBaseUrl}/webhooks/${id}`;
		expect((await request(url, { method: 'DELETE', headers: bearer(token) })).status).toBe(401);

		const deleted = await request(url, { method: 'DELETE', body: { service_access_token: token } });
		expect(deleted.status).toBe(200);
		expect(deleted.json).toEqual({ deleted: [{ id }] });
	});

	test('deleted subscriptions stay listed, disabled with deleted_at; deleting again -> 404', async () => {
		const { id } = (await postWebhook(webhookBody())).json.webhook;
		const url = `${sim.webhooksBaseUrl}/webhooks/${id}`;
		await request(url, { method: 'DELETE', body: { service_access_token: token } });
		const listed = await request(`${sim.webhooksBaseUrl}/webhooks`, { headers: bearer(token) });
		expect(listed.json.webhooks).toEqual([
			expect.objectContaining({ id, status: 'disabled', deleted_at: expect.any(String) }),
		]);
		const again = await request(url, { method: 'DELETE', body: { service_access_token: token } });
		expect(again.status).toBe(404);
		expect(again.json).toEqual({ error: 'Webhook not found' });
		const unknown = await request(`${sim.webhooksBaseUrl}/webhooks/424242`, {
			method: 'DELETE',
			body: { service_access_token: token },
		});
		expect(unknown.status).toBe(404);
	});
});

describe('GET /events', () => {
	const events = (body?: Record<string, unknown>, query = '') =>
		request(`${sim.webhooksBaseUrl}/events${query}`, { headers: bearer(token), body });

	test('bearer only; defaults offset 0, limit 10, ordered by id', async () => {
		sim.seedEvents(25);
		expect((await request(`${sim.webhooksBaseUrl}/events`)).status).toBe(401);
		const answer = await events();
		expect(answer.status).toBe(200);
		expect(answer.json.map((e: { id: number }) => e.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
		expect(answer.json[0]).toEqual({
			id: 1,
			topic: 'clinic-38729.patient',
			name: 'patient-updated',
			source: expect.any(String),
			behaviour: expect.any(String),
			compensating_event: {},
			previous_event: expect.any(String),
			root_event: expect.any(String),
			event_schema_version: expect.any(String),
			value: expect.objectContaining({ id: expect.any(Number), email: expect.any(String) }),
			key: expect.any(String),
			domain: expect.any(String),
			organization_id: 38729,
			tries_left: 3,
			created_at: expect.any(String),
			logs: [],
		});
	});

	test('a service that pages small: setEventsPageCap caps every page, reset lifts it', async () => {
		sim.seedEvents(25);
		sim.setEventsPageCap(3);
		expect((await events({ limit: 100 })).json.map((e: { id: number }) => e.id)).toEqual([1, 2, 3]);
		expect((await events({ offset: 3, topic: 'clinic-38729.patient' })).json.map((e: { id: number }) => e.id)).toEqual([4, 5, 6]);
		sim.reset();
		sim.seedEvents(25);
		expect((await events({ limit: 100 })).json).toHaveLength(25);
	});

	test('by default reads offset, limit, topic and name only from a JSON body on the GET, as the spec declares', async () => {
		sim.seedEvents(5);
		sim.seedEvents(5, 'invoice', 'invoice-updated');
		const page = await events({ offset: 1, limit: 2, topic: 'clinic-38729.invoice', name: 'invoice-updated' });
		expect(page.json.map((e: { id: number }) => e.id)).toEqual([7, 8]);
		// The query string is not read: defaults apply.
		const viaQuery = await events(undefined, '?offset=8&limit=5');
		expect(viaQuery.json.map((e: { id: number }) => e.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
		expect((await events({ topic: 'invoice' })).json).toEqual([]);
	});

	test('query mode reads only the query string; both reads both, the body winning', async () => {
		sim.seedEvents(10);
		sim.setEventParams('query');
		expect((await events(undefined, '?offset=8&limit=5')).json.map((e: { id: number }) => e.id)).toEqual([9, 10]);
		expect((await events({ offset: 8, limit: 5 })).json).toHaveLength(10);
		sim.setEventParams('both');
		expect((await events(undefined, '?offset=8&limit=5')).json.map((e: { id: number }) => e.id)).toEqual([9, 10]);
		expect((await events({ offset: 2, limit: 1 }, '?offset=8&limit=5')).json.map((e: { id: number }) => e.id)).toEqual([3]);
		expect(() => sim.setEventParams('header' as never)).toThrow(/body, query or both/);
	});

	test('newest-first order lists the highest ids first, filtered or not; a hook sees each page', async () => {
		sim.seedEvents(5);
		sim.seedEvents(3, 'invoice', 'invoice-updated');
		sim.setEventOrder('newest-first');
		const pages: number[][] = [];
		sim.onEventsPage((page) => pages.push(page.map((e) => e.id)));
		expect((await events({ offset: 1, limit: 3 })).json.map((e: { id: number }) => e.id)).toEqual([7, 6, 5]);
		expect((await events({ offset: 1, limit: 5, name: 'patient-updated' })).json.map((e: { id: number }) => e.id)).toEqual([
			4, 3, 2, 1,
		]);
		expect(pages).toEqual([
			[7, 6, 5],
			[4, 3, 2, 1],
		]);
		sim.reset();
		sim.seedEvents(3);
		expect((await events({ limit: 2 })).json.map((e: { id: number }) => e.id)).toEqual([1, 2]);
	});

	test('limit is clamped to 100; a negative offset -> 422', async () => {
		sim.seedEvents(150);
		expect((await events({ limit: 500 })).json).toHaveLength(100);
		expect((await events({ offset: -1 })).status).toBe(422);
	});
});
