import { startSimulator, type Simulator } from './index';
import { accessToken, api, bearer, request } from './testing';

let sim: Simulator;
let token: string;

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true });
});

afterAll(async () => {
	await sim.close();
});

beforeEach(async () => {
	sim.reset();
	token = await accessToken(sim);
	sim.clearLog();
});

const control = (path: string, body?: unknown) =>
	request(`${sim.apiOrigin}/__sim/${path}`, body === undefined ? {} : { method: 'POST', body });
const emails = () => sim.data.invoiceEmails.length;
const emailInvoice = (id: number) => api(sim, token, `/invoices/${id}/email_invoice`, { method: 'POST' });
/** Polls until `check` holds; the test's own timeout bounds it. */
const until = async (check: () => boolean): Promise<void> => {
	while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
};
/** The error a request without an answer ends with (its code), or 'answered <status>'. */
const outcome = (answer: Promise<{ status: number }>): Promise<string> =>
	answer.then(
		(a) => `answered ${a.status}`,
		(error: NodeJS.ErrnoException) => error.code ?? error.message,
	);

describe('faults', () => {
	test('off by default: nothing is faulted and nothing is listed', async () => {
		expect(sim.faults()).toEqual({ faults: [], hits: 0, held: 0 });
		expect((await api(sim, token, '/consultations/1')).status).toBe(200);
		expect((await emailInvoice(3)).status).toBe(200);
		expect(sim.log.every((entry) => entry.fault === undefined)).toBe(true);
	});

	test('status: 503 without Retry-After for the next request only; the request is not handled', async () => {
		sim.addFault({ kind: 'status', status: 503, method: 'POST', path: '/api/v1/invoices/*/email_invoice', count: 1 });
		const refused = await emailInvoice(3);
		expect(refused.status).toBe(503);
		expect(refused.headers['retry-after']).toBeUndefined();
		expect(refused.json).toEqual({ error: 'Service Unavailable' });
		expect(emails()).toBe(0);
		expect(sim.faults().faults).toEqual([]);
		expect((await emailInvoice(3)).status).toBe(200);
		expect(emails()).toBe(1);
		expect(sim.log.map((entry) => [entry.status, entry.fault])).toEqual([
			[503, 'status'],
			[200, undefined],
		]);
	});

	test('status: 429 and 503 with Retry-After, scoped by host, method and path', async () => {
		sim.addFault({ kind: 'status', status: 429, retryAfterSeconds: 120, host: 'api', method: 'GET', path: '/api/v1/consultations/2' });
		sim.addFault({ kind: 'status', retryAfterSeconds: 1, host: 'webhooks', path: '/events', count: 2 });
		// Other paths, methods and hosts are untouched.
		expect((await api(sim, token, '/consultations/1')).status).toBe(200);
		const busy = await api(sim, token, '/consultations/2');
		expect([busy.status, busy.headers['retry-after'], busy.json]).toEqual([429, '120', { error: 'Too Many Requests' }]);
		expect((await api(sim, token, '/consultations/2')).status).toBe(429);
		const events = () => request(`${sim.webhooksBaseUrl}/events`, { headers: bearer(token) });
		const first = await events();
		expect([first.status, first.headers['retry-after']]).toEqual([503, '1']);
		expect((await events()).status).toBe(503);
		expect((await events()).status).toBe(200);
		expect(sim.faults()).toMatchObject({
			faults: [{ kind: 'status', status: 429, path: '/api/v1/consultations/2', hits: 2, remaining: null }],
			hits: 4,
		});
	});

	test('reset: a write takes effect, then the connection is closed without an answer', async () => {
		sim.addFault({ kind: 'reset', method: 'POST', path: '/api/v1/invoices/3/email_invoice', count: 1 });
		expect(await outcome(emailInvoice(3))).toMatch(/ECONNRESET|socket hang up/);
		expect(sim.data.invoiceEmails.map((email) => email.invoice_id)).toEqual([3]);
		expect(sim.log.map((entry) => [entry.path, entry.status, entry.fault])).toEqual([
			['/api/v1/invoices/3/email_invoice', 200, 'reset'],
		]);
		// A read too: handled, then no answer.
		sim.addFault({ kind: 'reset', path: '/api/v1/consultations/1' });
		expect(await outcome(api(sim, token, '/consultations/1'))).toMatch(/ECONNRESET|socket hang up/);
		expect(await outcome(api(sim, token, '/consultations/1'))).toMatch(/ECONNRESET|socket hang up/);
		expect(sim.faults().faults[0]).toMatchObject({ hits: 2, remaining: null });
	});

	test('stall: held without an answer until the faults are cleared; nothing is done', async () => {
		sim.addFault({ kind: 'stall', method: 'POST', path: '/api/v1/invoices/3/email_invoice' });
		const held = outcome(emailInvoice(3));
		await until(() => sim.faults().held === 1);
		// Logged as it is held (status 0); other requests go on.
		expect(sim.log.map((entry) => [entry.path, entry.status, entry.fault])).toEqual([
			['/api/v1/invoices/3/email_invoice', 0, 'stall'],
		]);
		expect((await api(sim, token, '/consultations/1')).status).toBe(200);
		sim.clearFaults();
		expect(await held).toMatch(/ECONNRESET|socket hang up/);
		expect(sim.faults()).toEqual({ faults: [], hits: 0, held: 0 });
		expect(emails()).toBe(0);
	});

	test('stall: a client that gives up frees the held request', async () => {
		sim.addFault({ kind: 'stall', path: '/api/v1/consultations/*', count: 1 });
		const controller = new AbortController();
		const gaveUp = fetch(`${sim.apiBaseUrl}/consultations/1`, { headers: bearer(token), signal: controller.signal }).catch(
			(error: Error) => error.name,
		);
		await until(() => sim.faults().held === 1);
		controller.abort();
		expect(await gaveUp).toBe('AbortError');
		await until(() => sim.faults().held === 0);
		expect((await api(sim, token, '/consultations/1')).status).toBe(200);
	});

	test('stall with ms: answered late, and a write takes effect even though the client gave up', async () => {
		sim.addFault({ kind: 'stall', ms: 50, path: '/api/v1/consultations/1', count: 1 });
		expect((await api(sim, token, '/consultations/1')).status).toBe(200);

		sim.addFault({ kind: 'stall', ms: 100, method: 'POST', path: '/api/v1/invoices/3/email_invoice', count: 1 });
		const controller = new AbortController();
		const gaveUp = fetch(`${sim.apiBaseUrl}/invoices/3/email_invoice`, {
			method: 'POST',
			headers: bearer(token),
			signal: controller.signal,
		}).catch((error: Error) => error.name);
		await until(() => sim.faults().held === 1);
		controller.abort();
		expect(await gaveUp).toBe('AbortError');
		await until(() => emails() === 1);
		// A stalled request is logged once, as it is held.
		expect(sim.log.map((entry) => [entry.status, entry.fault])).toEqual([
			[0, 'stall'],
			[0, 'stall'],
		]);
	});

	test('ignore-offset: GET /events answers the first page whatever the offset (body or query)', async () => {
		sim.seedEvents(15);
		const page = async (where: 'body' | 'query') => {
			const answer =
				where === 'body'
					? await request(`${sim.webhooksBaseUrl}/events`, { headers: bearer(token), body: { offset: 10, limit: 10 } })
					: await request(`${sim.webhooksBaseUrl}/events?offset=10&limit=10`, { headers: bearer(token) });
			return (answer.json as Array<{ id: number }>).map((event) => event.id);
		};
		const ids = sim.events().map((event) => event.id);
		expect(await page('body')).toEqual(ids.slice(10, 15));
		sim.addFault({ kind: 'ignore-offset', host: 'webhooks', path: '/events', count: 1 });
		expect(await page('body')).toEqual(ids.slice(0, 10));
		expect(await page('body')).toEqual(ids.slice(10, 15));
		sim.setEventParams('query');
		sim.addFault({ kind: 'ignore-offset', path: '/events' });
		expect(await page('query')).toEqual(ids.slice(0, 10));
		expect(sim.log.at(-1)).toMatchObject({ status: 200, fault: 'ignore-offset', query: { offset: '10' } });
	});

	test('the first matching fault applies; reset() clears them all', async () => {
		sim.addFault({ kind: 'status', status: 502, path: '/api/v1/consultations/1', count: 1 });
		sim.addFault({ kind: 'status', status: 500, path: '/api/v1/consultations/*', count: 1 });
		expect((await api(sim, token, '/consultations/1')).status).toBe(502);
		expect((await api(sim, token, '/consultations/1')).status).toBe(500);
		expect((await api(sim, token, '/consultations/1')).status).toBe(200);
		sim.addFault({ kind: 'status' });
		sim.reset();
		expect(sim.faults().faults).toEqual([]);
		expect((await api(sim, undefined, '/states/1')).status).toBe(200);
	});

	test('malformed faults are refused', () => {
		expect(() => sim.addFault({ kind: 'nap' as never })).toThrow(/kind must be one of/);
		expect(() => sim.addFault({ kind: 'status', status: 200 })).toThrow(/400 to 599/);
		expect(() => sim.addFault({ kind: 'reset', retryAfterSeconds: 1 })).toThrow(/kind status only/);
		expect(() => sim.addFault({ kind: 'stall', count: 0 })).toThrow(/count/);
		expect(() => sim.addFault({ kind: 'stall', host: 'mail' as never })).toThrow(/host/);
		expect(sim.faults().faults).toEqual([]);
	});

	test('control API: add, list, clear; bad input answers 400', async () => {
		const added = await control('faults', { kind: 'status', status: 429, retryAfterSeconds: 60, host: 'webhooks', method: 'get', path: '/events' });
		expect(added.status).toBe(200);
		expect(added.json).toEqual({ id: expect.any(Number) });
		expect((await request(`${sim.webhooksBaseUrl}/events`, { headers: bearer(token) })).status).toBe(429);
		expect((await control('faults')).json).toEqual({
			faults: [
				{
					kind: 'status',
					status: 429,
					retryAfterSeconds: 60,
					host: 'webhooks',
					method: 'GET',
					path: '/events',
					id: added.json.id,
					hits: 1,
					remaining: null,
				},
			],
			hits: 1,
			held: 0,
		});
		expect((await control('faults', { kind: 'status', status: 99 })).status).toBe(400);
		expect((await control('faults', [])).status).toBe(400);
		expect((await control('clear-faults', {})).json).toEqual({ ok: true });
		expect((await request(`${sim.webhooksBaseUrl}/events`, { headers: bearer(token) })).status).toBe(200);
		// The control surface itself is never faulted.
		await control('faults', { kind: 'status', path: '*' });
		expect((await control('info')).status).toBe(200);
	});
});

test('close: a request held by a stall loses its connection and close() resolves', async () => {
	const own = await startSimulator();
	own.addFault({ kind: 'stall', path: '/api/v1/waiting_rooms' });
	const held = outcome(request(`${own.apiBaseUrl}/waiting_rooms`));
	await until(() => own.faults().held === 1);
	await own.close();
	expect(await held).toMatch(/ECONNRESET|socket hang up/);
});
