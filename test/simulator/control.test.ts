import * as http from 'node:http';

import { startSimulator, type Simulator } from './index';
import { accessToken, api, bearer, passwordGrant, request, startReceiver, subscribe } from './testing';

let sim: Simulator;

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true, deliveryRetryDelayMs: 10 });
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => sim.reset());

const control = (path: string, body?: unknown) =>
	request(`${sim.apiOrigin}/__sim/${path}`, body === undefined ? {} : { method: 'POST', body });
const post = (path: string, body: unknown = {}) => control(path, body);

describe('rate limit and latency (spec requests only)', () => {
	test('every Nth request answers 429 Too Many Requests with Retry-After', async () => {
		sim.setRateLimit({ every: 3, retryAfterSeconds: 2 });
		const statuses: number[] = [];
		for (let i = 0; i < 6; i++) statuses.push((await api(sim, undefined, '/states/1')).status);
		expect(statuses).toEqual([200, 200, 429, 200, 200, 429]);
		const limited = sim.log.find((entry) => entry.status === 429);
		expect(limited).toBeDefined();

		sim.setRateLimit({ every: 1, retryAfterSeconds: 7 });
		const answer = await request(`${sim.webhooksBaseUrl}/events`);
		expect(answer.status).toBe(429);
		expect(answer.headers['retry-after']).toBe('7');
		expect(answer.json).toEqual({ error: 'Too Many Requests' });
		// the control surface is never limited
		expect((await control('info')).status).toBe(200);
		sim.setRateLimit(null);
		expect((await api(sim, undefined, '/states/1')).status).toBe(200);
	});

	test('requests per second: past the limit 429 with the seconds until one fits; refused ones do not count', async () => {
		sim.setRateLimit({ requestsPerSecond: 5 });
		const first = await Promise.all(Array.from({ length: 8 }, () => api(sim, undefined, '/states/1')));
		expect(first.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
		expect(first.find((answer) => answer.status === 429)?.headers['retry-after']).toBe('1');
		await new Promise((resolve) => setTimeout(resolve, 1050));
		// A second later the five accepted ones have left the window; the three refused never entered it.
		const second = await Promise.all(Array.from({ length: 5 }, () => api(sim, undefined, '/states/1')));
		expect(second.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
	});

	test('requests in flight: one more than the limit while they are answered is refused', async () => {
		// Held long enough that all five are in before the first is answered, however slow the machine.
		sim.setLatency(2000);
		sim.setRateLimit({ maxInFlight: 3, retryAfterSeconds: 2 });
		const answers = await Promise.all(Array.from({ length: 5 }, () => api(sim, undefined, '/states/1')));
		expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 429, 429]);
		expect(answers.find((answer) => answer.status === 429)?.headers['retry-after']).toBe('2');
		// Once answered, they no longer count.
		expect((await api(sim, undefined, '/states/1')).status).toBe(200);
		expect(sim.inFlight()).toEqual({ now: 0, peak: 5 });
		expect((await control('in-flight')).json).toEqual({ now: 0, peak: 5 });
	});

	test('a rate limit without a limit is refused', async () => {
		expect(() => sim.setRateLimit({ retryAfterSeconds: 1 })).toThrow(/at least one of/);
		expect((await post('rate-limit', { requestsPerSecond: 0 })).status).toBe(400);
		expect((await post('rate-limit', { requestsPerSecond: 50 })).status).toBe(200);
	});

	test('latency delays spec answers, not control answers', async () => {
		// Far longer than a control round trip takes on a loaded machine.
		sim.setLatency(5000);
		let specAnswered = false;
		const spec = api(sim, undefined, '/waiting_rooms').then((answer) => {
			specAnswered = true;
			return answer;
		});
		while (sim.inFlight().now === 0) await new Promise((resolve) => setTimeout(resolve, 5));
		// Sent after the spec request, answered while that one is still held.
		expect((await control('info')).status).toBe(200);
		expect(specAnswered).toBe(false);
		expect(sim.inFlight().now).toBe(1);
		expect((await spec).status).toBe(200);
	});
});

describe('HTTP control surface under /__sim/', () => {
	test('info names the hosts, accounts, topic prefix and portal demo', async () => {
		const info = (await control('info')).json;
		expect(info).toMatchObject({
			apiBaseUrl: sim.apiBaseUrl,
			webhooksBaseUrl: sim.webhooksBaseUrl,
			topicPrefix: 'clinic-38729',
			demo: sim.demo,
			twoFactor: sim.twoFactor,
			portalDemo: sim.portalDemo,
		});
	});

	test('log, clear-log and token-requests', async () => {
		await passwordGrant(sim);
		const before = (await control('token-requests')).json;
		expect(before).toEqual({ total: 1, password: 1, refresh_token: 0, refused_reuse: 0 });
		const log = (await control('log')).json.log;
		expect(log).toHaveLength(1);
		expect(log[0].path).toBe('/api/v1/oauth/token');
		await post('clear-log');
		expect((await control('log')).json.log).toEqual([]);
		expect((await control('token-requests')).json.total).toBe(0);
	});

	test('refresh-token, expire-access-tokens, revoke-tokens and token-lifetime', async () => {
		const { refresh_token } = (await post('refresh-token', { username: sim.twoFactor.username })).json;
		const grant = await request(`${sim.apiBaseUrl}/oauth/token`, {
			method: 'POST',
			body: { grant_type: 'refresh_token', refresh_token },
		});
		expect(grant.status).toBe(200);
		await post('expire-access-tokens');
		expect((await api(sim, grant.json.access_token, '/consultations/1')).status).toBe(401);
		await post('token-lifetime', { seconds: 60 });
		const token = (await passwordGrant(sim)).json;
		expect(token.expires_in).toBe(60);
		await post('revoke-tokens');
		expect((await api(sim, token.access_token, '/consultations/1')).status).toBe(401);
		expect((await post('refresh-token', { username: 'nobody@clinic.test' })).status).toBe(400);
	});

	test('revoke-access-tokens, reuse-revokes-chain and refresh-token-status', async () => {
		const refresh = async (refreshToken: string) =>
			await request(`${sim.apiBaseUrl}/oauth/token`, {
				method: 'POST',
				body: { grant_type: 'refresh_token', refresh_token: refreshToken },
			});
		const first = (await passwordGrant(sim)).json;
		await post('revoke-access-tokens');
		expect((await api(sim, first.access_token, '/consultations/1')).status).toBe(401);
		const second = (await refresh(first.refresh_token)).json;
		expect((await post('refresh-token-status', { refresh_token: second.refresh_token })).json).toEqual({
			known: true,
			live: true,
			newest: true,
			used: false,
		});
		expect((await post('reuse-revokes-chain', { on: true })).status).toBe(200);
		expect((await refresh(first.refresh_token)).status).toBe(400);
		expect((await post('refresh-token-status', { refresh_token: second.refresh_token })).json).toMatchObject({
			live: false,
		});
		expect((await control('token-requests')).json).toEqual({ total: 3, password: 1, refresh_token: 2, refused_reuse: 1 });
		expect((await post('reuse-revokes-chain', { on: 'yes' })).status).toBe(400);
		expect((await post('refresh-token-status', {})).status).toBe(400);
	});

	test('the service disables or deletes a subscription: it is listed so (status, deleted_at) and gets no deliveries', async () => {
		const token = await accessToken(sim);
		const target = await startReceiver();
		try {
			const fields = { url: target.url, suffix: 'consultation', eventName: 'consultation-created' };
			const disabled = (await subscribe(sim, token, fields)).json.webhook.id as number;
			const deleted = (await subscribe(sim, token, fields)).json.webhook.id as number;
			expect((await post(`subscriptions/${disabled}/disable`)).status).toBe(200);
			expect((await post(`subscriptions/${deleted}/delete`)).status).toBe(200);
			expect((await post(`subscriptions/${deleted}/disable`)).status).toBe(400);
			const listed = (await request(`${sim.webhooksBaseUrl}/webhooks`, { headers: bearer(token) })).json.webhooks;
			expect(listed.map((s: { status: string; deleted_at: string | null }) => [s.status, s.deleted_at === null])).toEqual([
				['disabled', true],
				['disabled', false],
			]);
			await post('emit', { topicSuffix: 'consultation', eventName: 'consultation-created', value: { id: 7 } });
			expect(target.received).toHaveLength(0);
		} finally {
			await target.close();
		}
	});

	test('emit answers the event record after its deliveries settle; duplicates mode applies', async () => {
		const token = await accessToken(sim);
		const target = await startReceiver();
		try {
			await subscribe(sim, token, { url: target.url, suffix: 'consultation', eventName: 'consultation-created' });
			expect((await control('subscriptions')).json.subscriptions).toHaveLength(1);
			await post('duplicates', { mode: 'sequential' });
			const event = (
				await post('emit', { topicSuffix: 'consultation', eventName: 'consultation-created', value: { id: 7 } })
			).json;
			expect(event).toMatchObject({ topic: 'clinic-38729.consultation', name: 'consultation-created', value: { id: 7 } });
			expect(event.logs).toHaveLength(2);
			expect(target.received).toHaveLength(2);
			const wrong = await post('emit', { topicSuffix: 'consultation', eventName: 'consultation-done' });
			expect(wrong.status).toBe(400);
			expect((await post('duplicates', { mode: 'twice' })).status).toBe(400);
		} finally {
			await target.close();
		}
	});

	test("deliveries/{id} says where an event's deliveries stand; deliveries/{id}/settled answers once none can come", async () => {
		const token = await accessToken(sim);
		// Fails twice, then accepts: settled only after the third attempt.
		const target = await startReceiver((n) => (n <= 2 ? 503 : 200));
		try {
			await subscribe(sim, token, { url: target.url, suffix: 'patient', eventName: 'patient-updated' });
			// A change through the API: its deliveries run in the background.
			expect((await api(sim, token, '/people/2', { method: 'PUT', body: { person: { first_name: 'Luis' } } })).status).toBe(200);
			const [event] = sim.events();
			const settled = await post(`deliveries/${event.id}/settled`);
			expect(settled.status).toBe(200);
			expect(settled.json).toEqual({
				event_id: event.id,
				settled: true,
				deliveries: [
					{
						subscription_id: expect.any(Number),
						target_url: target.url,
						outcome: 'delivered',
						attempts: 3,
						retries_left: 1,
						last_attempt_by: null,
					},
				],
			});
			expect(target.received).toHaveLength(3);
			expect((await control(`deliveries/${event.id}`)).json).toEqual(settled.json);
			expect((await control('deliveries/999')).status).toBe(404);
			expect((await post('deliveries/999/settled')).status).toBe(404);
		} finally {
			await target.close();
		}
	});

	test('rate-limit and latency can be set and cleared over HTTP', async () => {
		await post('rate-limit', { every: 1, retryAfterSeconds: 3 });
		expect((await api(sim, undefined, '/states/1')).status).toBe(429);
		await post('rate-limit', null);
		expect((await api(sim, undefined, '/states/1')).status).toBe(200);
		await post('latency', { ms: 0 });
		expect((await post('rate-limit', { every: 0, retryAfterSeconds: 1 })).status).toBe(400);
	});

	test('seed-events, seed-invoices, state and reset', async () => {
		const seeded = (await post('seed-events', { count: 1000 })).json;
		expect(seeded).toEqual({ count: 1000, total: 1000 });
		const { ids } = (await post('seed-invoices', { count: 3 })).json;
		expect(ids).toHaveLength(3);
		const state = (await control('state')).json;
		expect(state.invoices.map((i: { id: number }) => i.id)).toEqual(expect.arrayContaining(ids));
		expect(state.people).toHaveLength(4);

		await post('reset');
		expect(sim.events()).toHaveLength(0);
		expect(sim.data.invoices.size).toBe(3);
	});

	test('finish-consultation: a fresh finished consultation per call, whose invoice can be signed and e-mailed every time', async () => {
		const token = await accessToken(sim);
		const seen = new Set<number>();
		for (let run = 0; run < 3; run++) {
			const event = (await post('finish-consultation')).json;
			expect(event).toMatchObject({ name: 'consultation-finished', topic: `${sim.topicPrefix}.consultation` });
			const { id, encounter_id: encounterId } = event.value as { id: number; encounter_id: number };
			expect(seen.has(id)).toBe(false);
			seen.add(id);
			expect((await api(sim, token, `/consultations/${id}`)).json).toMatchObject({ consultation: { id, finished_at: expect.any(String) } });
			const invoice = (await api(sim, token, `/encounters/${encounterId}/invoice`)).json.invoice as { id: number; total_cents: number };
			expect(invoice.total_cents).toBeGreaterThan(0);
			expect((await api(sim, token, `/invoices/${invoice.id}/sign`, { method: 'POST' })).status).toBe(200);
			expect((await api(sim, token, `/invoices/${invoice.id}/email_invoice`, { method: 'POST' })).status).toBe(200);
		}
		expect(sim.data.invoiceEmails).toHaveLength(3);
	});

	test('unknown control paths answer 404', async () => {
		expect((await control('nothing-here')).status).toBe(404);
	});
});

// Speed is measured by `npm run bench`, not here: these check behaviour at scale.
describe('scale', () => {
	test('50,000 seeded events page through GET /events with topic and name filters', async () => {
		const token = await accessToken(sim);
		sim.seedEvents(50_000);
		const last = await request(`${sim.webhooksBaseUrl}/events`, {
			headers: bearer(token),
			body: { offset: 49_900, limit: 100 },
		});
		expect(last.json).toHaveLength(100);
		expect(last.json[99].id).toBe(50_000);
		const filtered = await request(`${sim.webhooksBaseUrl}/events`, {
			headers: bearer(token),
			body: { offset: 49_990, limit: 100, topic: 'clinic-38729.patient', name: 'patient-updated' },
		});
		expect(filtered.json).toHaveLength(10);
	}, 30_000);

	test('500 signed invoices download as PDFs', async () => {
		const token = await accessToken(sim);
		const ids = sim.seedInvoices(500);
		const answers = await Promise.all(
			ids.map((id) => fetch(`${sim.apiBaseUrl}/invoices/${id}/download_cfdi.pdf?token=${token}`)),
		);
		expect(answers.every((a) => a.status === 200)).toBe(true);
		await Promise.all(answers.map((a) => a.arrayBuffer()));
	}, 30_000);

	test('keeps connections alive over 2,000 requests', async () => {
		const token = await accessToken(sim);
		const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
		const sockets = new Set<unknown>();
		const count = 2000;
		let next = 0;
		const get = () =>
			new Promise<string | undefined>((resolve, reject) => {
				const req = http.get(`${sim.apiBaseUrl}/consultations/1`, { agent, headers: bearer(token) }, (res) => {
					sockets.add(req.socket);
					res.resume();
					res.on('end', () => resolve(res.headers.connection));
				});
				req.on('error', reject);
			});
		const connections: Array<string | undefined> = [];
		await Promise.all(
			Array.from({ length: 16 }, async () => {
				while (next < count) {
					next++;
					connections.push(await get());
				}
			}),
		);
		agent.destroy();
		expect(connections.every((c) => c === 'keep-alive')).toBe(true);
		expect(sockets.size).toBeLessThanOrEqual(16);
	}, 30_000);
});
