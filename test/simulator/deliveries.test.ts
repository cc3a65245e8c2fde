import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startSimulator, type Simulator } from './index';
import { accessToken, api, bearer, type Receiver, request, startReceiver, subscribe } from './testing';

let sim: Simulator;
let token: string;
const receivers: Receiver[] = [];

async function receiver(statusFor?: (n: number) => number): Promise<Receiver> {
	const started = await startReceiver(statusFor);
	receivers.push(started);
	return started;
}

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true, deliveryRetryDelayMs: 20 });
	token = await accessToken(sim);
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => sim.reset());

afterEach(async () => {
	await sim.deliveriesSettled();
	await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const hmac = (secret: string, raw: Buffer) => createHmac('sha256', secret).update(raw).digest('hex');

describe('a delivery', () => {
	test('is a POST of exactly {"value": payload}, signed with hex HMAC-SHA256 of the raw body', async () => {
		const target = await receiver();
		await subscribe(sim, token, { url: target.url, suffix: 'patient', eventName: 'patient-updated', secret: 'k3y' });
		const value = { id: 1, first_name: 'María Fernanda', note: 'ñ ü €' };
		const event = await sim.emit('patient', 'patient-updated', value);

		expect(target.received).toHaveLength(1);
		const [delivery] = target.received;
		expect(delivery.raw.toString('utf8')).toBe(JSON.stringify({ value }));
		expect(delivery.headers['content-type']).toBe('application/json');
		expect(delivery.headers.signature).toBe(hmac('k3y', delivery.raw));
		expect(delivery.headers.signature).toMatch(/^[0-9a-f]{64}$/);

		expect(event.logs).toEqual([
			{
				id: expect.any(Number),
				target_url: target.url,
				authentication_data: { secret: 'k3y' },
				request: delivery.raw.toString('utf8'),
				response: 'ok',
				event_id: String(event.id),
				response_code: 200,
				retries_left: 3,
				created_at: expect.any(String),
			},
		]);
		expect(event.tries_left).toBe(3);
		const listed = await request(`${sim.webhooksBaseUrl}/events`, { headers: bearer(token) });
		expect(listed.json[0].logs).toHaveLength(1);
	});

	test('goes only to live subscriptions with the same topic and event name', async () => {
		const updated = await receiver();
		const created = await receiver();
		const removed = await receiver();
		await subscribe(sim, token, { url: updated.url, suffix: 'patient', eventName: 'patient-updated' });
		await subscribe(sim, token, { url: created.url, suffix: 'patient', eventName: 'patient-created' });
		const { id } = (await subscribe(sim, token, { url: removed.url, suffix: 'patient', eventName: 'patient-updated' }))
			.json.webhook;
		await request(`${sim.webhooksBaseUrl}/webhooks/${id}`, { method: 'DELETE', body: { service_access_token: token } });

		await sim.emit('patient', 'patient-updated', { id: 2 });
		expect(updated.received).toHaveLength(1);
		expect(created.received).toHaveLength(0);
		expect(removed.received).toHaveLength(0);
	});

	test('a late commit: the id is taken at once, the event shows in the log among higher ids and is delivered only later', async () => {
		const target = await receiver();
		await subscribe(sim, token, { url: target.url, suffix: 'patient', eventName: 'patient-updated' });
		const late = sim.emitLate('patient', 'patient-updated', { id: 7 }, 300);
		const after = await sim.emit('patient', 'patient-updated', { id: 8 });
		expect(after.id).toBe(late.id + 1);
		const listedBefore = await request(`${sim.webhooksBaseUrl}/events`, { headers: bearer(token) });
		expect(listedBefore.json.map((event: { id: number }) => event.id)).toEqual([after.id]);
		expect(target.received).toHaveLength(1);
		const record = await late.record;
		expect(record.id).toBe(late.id);
		expect(target.received).toHaveLength(2);
		const listed = await request(`${sim.webhooksBaseUrl}/events`, { headers: bearer(token) });
		expect(listed.json.map((event: { id: number }) => event.id)).toEqual([late.id, after.id]);
	});

	test('carries each subscription its own signature over the same bytes', async () => {
		const target = await receiver();
		await subscribe(sim, token, { url: target.url, suffix: 'invoice', eventName: 'invoice-updated', secret: 'one' });
		await subscribe(sim, token, { url: target.url, suffix: 'invoice', eventName: 'invoice-updated', secret: 'two' });
		await sim.emit('invoice', 'invoice-updated', { id: 3 });
		const [a, b] = target.received;
		expect(a.raw.equals(b.raw)).toBe(true);
		expect(new Set([a.headers.signature, b.headers.signature])).toEqual(new Set([hmac('one', a.raw), hmac('two', a.raw)]));
	});

	test('follows changes made through the API: PUT /people emits patient-updated to subscribers', async () => {
		const target = await receiver();
		await subscribe(sim, token, { url: target.url, suffix: 'patient', eventName: 'patient-updated' });
		await api(sim, token, '/people/2', { method: 'PUT', body: { person: { telephone2: '3311112222' } } });
		await sim.deliveriesSettled();
		expect(target.received).toHaveLength(1);
		const body = JSON.parse(target.received[0].raw.toString('utf8'));
		expect(Object.keys(body)).toEqual(['value']);
		expect(body.value).toMatchObject({ id: 2, telephone2: '3311112222' });
	});

	test('refuses names that are not in the catalog', async () => {
		await expect(sim.emit('consultation-schedule', 'consultation-schedule-created', {})).rejects.toThrow(
			/consultation-schedule-create/,
		);
		await expect(sim.emit('patients', 'patient-updated', {})).rejects.toThrow(/Unknown topic suffix/);
	});
});

describe('the service as strict as the spec', () => {
	test('top-level identifier bodies: the payload object is the body, signed as sent; other payloads stay wrapped', async () => {
		const target = await receiver();
		await subscribe(sim, token, { url: target.url, suffix: 'patient', eventName: 'patient-updated', secret: 'k3y' });
		sim.setDeliveryBody('top-level');
		await sim.emit('patient', 'patient-updated', { id: 5 });
		await sim.emit('patient', 'patient-updated', [5]);
		expect(target.received.map((r) => r.raw.toString('utf8'))).toEqual(['{"id":5}', '{"value":[5]}']);
		expect(target.received[0].headers.signature).toBe(hmac('k3y', target.received[0].raw));
		sim.reset();
		await subscribe(sim, token, { url: target.url, suffix: 'patient', eventName: 'patient-updated' });
		await sim.emit('patient', 'patient-updated', { id: 6 });
		expect(target.received[2].raw.toString('utf8')).toBe('{"value":{"id":6}}');
	});

	test('https only, delivered through a proxy: the subscribed https address reaches the local receiver', async () => {
		const target = await receiver();
		const local = new URL(target.url);
		const strict = await startSimulator({
			callbackProxy: { from: 'https://n8n.clinic.test', to: local.origin },
			deliveryRetryDelayMs: 20,
		});
		try {
			const strictToken = await accessToken(strict);
			const refused = await subscribe(strict, strictToken, { url: target.url, suffix: 'patient', eventName: 'patient-updated' });
			expect(refused.status).toBe(422);
			expect(refused.json.errors.url).toEqual(['must be an HTTPS URL']);
			const publicUrl = `https://n8n.clinic.test${local.pathname}?event=patient:patient-updated`;
			expect((await subscribe(strict, strictToken, { url: publicUrl, suffix: 'patient', eventName: 'patient-updated' })).status).toBe(201);
			const event = await strict.emit('patient', 'patient-updated', { id: 1 });
			expect(target.received).toHaveLength(1);
			expect(target.received[0].headers).toMatchObject({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'n8n.clinic.test' });
			expect(event.logs.map((log) => [log.target_url, log.response_code])).toEqual([[publicUrl, 200]]);
		} finally {
			await strict.close();
		}
	});
});

describe('retries', () => {
	test('a receiver answering 500 is retried 3 times; each attempt is logged and tries_left goes down', async () => {
		const failing = await receiver(() => 500);
		await subscribe(sim, token, { url: failing.url, suffix: 'consultation', eventName: 'consultation-finished' });
		const event = await sim.emit('consultation', 'consultation-finished', { id: 1 });

		expect(failing.received).toHaveLength(4);
		expect(new Set(failing.received.map((r) => r.raw.toString('utf8'))).size).toBe(1);
		expect(event.logs.map((log) => [log.response_code, log.retries_left])).toEqual([
			[500, 3],
			[500, 2],
			[500, 1],
			[500, 0],
		]);
		expect(event.logs[0].response).toBe('receiver failed');
		expect(event.tries_left).toBe(0);
		expect(sim.deliveryStatus(event.id)).toEqual({
			event_id: event.id,
			settled: true,
			deliveries: [expect.objectContaining({ outcome: 'exhausted', attempts: 4, retries_left: 0, last_attempt_by: null })],
		});
	});

	test('a retry waits for its delay: until then the delivery is pending, with its last attempt due by the schedule', async () => {
		const slow = await startSimulator({ allowHttpCallbacks: true, deliveryRetryDelayMs: 60_000, deliveryTimeoutMs: 1_000 });
		try {
			const failing = await receiver(() => 500);
			await subscribe(slow, await accessToken(slow), { url: failing.url, suffix: 'patient', eventName: 'patient-updated' });
			const emitted = slow.emit('patient', 'patient-updated', { id: 1 });
			const [event] = slow.events();
			while (event.logs.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
			const status = slow.deliveryStatus(event.id)!;
			expect(status.settled).toBe(false);
			expect(status.deliveries[0]).toMatchObject({ outcome: 'pending', attempts: 1, retries_left: 3 });
			// Three retries to come, each after its delay.
			expect(Date.parse(status.deliveries[0].last_attempt_by!) - Date.now()).toBeGreaterThan(3 * 60_000);
			expect(failing.received).toHaveLength(1);
			await slow.close();
			await emitted;
			expect(slow.deliveryStatus(event.id)).toMatchObject({ settled: true, deliveries: [{ outcome: 'stopped', attempts: 1 }] });
		} finally {
			await slow.close();
		}
	});

	test('a receiver that recovers gets no more attempts after its first 2xx', async () => {
		const flaky = await receiver((n) => (n <= 2 ? 503 : 204));
		await subscribe(sim, token, { url: flaky.url, suffix: 'invoice-item', eventName: 'invoice-item-created' });
		const event = await sim.emit('invoice-item', 'invoice-item-created', { id: 9 });
		expect(flaky.received).toHaveLength(3);
		expect(event.logs.map((log) => log.response_code)).toEqual([503, 503, 204]);
		expect(event.tries_left).toBe(1);
	});

	test('no answer at all (connection refused) is logged with response_code null', async () => {
		const gone = await startReceiver();
		await gone.close();
		await subscribe(sim, token, { url: gone.url, suffix: 'patient', eventName: 'patient-deleted' });
		const event = await sim.emit('patient', 'patient-deleted', { id: 4 });
		expect(event.logs).toHaveLength(4);
		expect(event.logs.every((log) => log.response_code === null)).toBe(true);
		expect(event.logs[0].response).toMatch(/ECONNREFUSED/);
	});

	test('a subscription deleted while retries are pending gets no more attempts', async () => {
		// A retry delay far longer than the DELETE takes on any machine; deleting ends the wait.
		const slow = await startSimulator({ allowHttpCallbacks: true, deliveryRetryDelayMs: 600_000 });
		try {
			const slowToken = await accessToken(slow);
			const failing = await receiver(() => 500);
			const { id } = (await subscribe(slow, slowToken, { url: failing.url, suffix: 'patient', eventName: 'patient-updated' }))
				.json.webhook;
			const emitted = slow.emit('patient', 'patient-updated', { id: 1 });
			while (failing.received.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
			await request(`${slow.webhooksBaseUrl}/webhooks/${id}`, {
				method: 'DELETE',
				body: { service_access_token: slowToken },
			});
			const event = await emitted;
			expect(failing.received).toHaveLength(1);
			expect(event.logs).toHaveLength(1);
			expect(slow.deliveryStatus(event.id)?.deliveries[0]).toMatchObject({ outcome: 'stopped', attempts: 1 });
		} finally {
			await slow.close();
		}
	});
});

describe('duplicates', () => {
	test("'sequential' sends each successful delivery a second time afterwards, byte-identical", async () => {
		const target = await receiver();
		await subscribe(sim, token, { url: target.url, suffix: 'prescription', eventName: 'prescription-cancel', secret: 'x' });
		sim.setDuplicateDeliveries('sequential');
		const event = await sim.emit('prescription', 'prescription-cancel', { id: 501 });
		expect(target.received).toHaveLength(2);
		const [first, second] = target.received;
		expect(first.raw.equals(second.raw)).toBe(true);
		expect(first.headers.signature).toBe(second.headers.signature);
		expect(second.at).toBeGreaterThanOrEqual(first.at);
		expect(event.logs).toHaveLength(2);
		// Settled only once the repeated copy went out too.
		expect(sim.deliveryStatus(event.id)?.deliveries).toEqual([expect.objectContaining({ outcome: 'delivered', attempts: 2 })]);
	});

	test("'concurrent' sends two copies at the same moment", async () => {
		let open = 0;
		let overlapping = 0;
		const target = await receiver();
		// A receiver that holds each request until two are open (or 5 s pass), to see that the copies overlap.
		const held: Array<() => void> = [];
		const slowServer = http.createServer((req, res) => {
			open++;
			overlapping = Math.max(overlapping, open);
			req.resume();
			let answered = false;
			const answer = () => {
				if (answered) return;
				answered = true;
				clearTimeout(fallback);
				open--;
				res.end('ok');
			};
			const fallback = setTimeout(answer, 5_000);
			held.push(answer);
			if (open === 2) held.splice(0).forEach((release) => release());
		});
		await new Promise<void>((resolve) => slowServer.listen(0, '127.0.0.1', resolve));
		try {
			const slowUrl = `http://127.0.0.1:${(slowServer.address() as AddressInfo).port}/hook`;
			await subscribe(sim, token, { url: target.url, suffix: 'waiting-room', eventName: 'patient-joined-twr' });
			await subscribe(sim, token, { url: slowUrl, suffix: 'waiting-room', eventName: 'patient-joined-twr' });
			sim.setDuplicateDeliveries('concurrent');
			const event = await sim.emit('waiting-room', 'patient-joined-twr', { person_id: 1, waiting_room_id: 1 });
			expect(target.received).toHaveLength(2);
			expect(target.received[0].raw.equals(target.received[1].raw)).toBe(true);
			expect(overlapping).toBe(2);
			expect(event.logs).toHaveLength(4);
		} finally {
			await new Promise((resolve) => {
				slowServer.close(resolve);
				slowServer.closeAllConnections();
			});
		}
	});

	test("'off' (the default after reset) sends once", async () => {
		const target = await receiver();
		await subscribe(sim, token, { url: target.url, suffix: 'account', eventName: 'updated' });
		await sim.emit('account', 'updated', { id: 1201 });
		expect(target.received).toHaveLength(1);
	});
});

describe('https callbacks', () => {
	let dir: string | undefined;
	let cert: { key: Buffer; cert: Buffer } | undefined;

	beforeAll(() => {
		try {
			dir = mkdtempSync(join(tmpdir(), 'clinic-sim-'));
			execFileSync(
				'openssl',
				['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-subj', '/CN=localhost', '-days', '1'],
				{ stdio: 'ignore' },
			);
			cert = { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
		} catch {
			cert = undefined; // no openssl here: the test below says so
		}
	});

	afterAll(() => {
		if (dir) rmSync(dir, { recursive: true, force: true });
	});

	test('a receiver with a self-signed certificate is delivered to', async () => {
		if (!cert) {
			console.warn('openssl not available: https delivery not tested');
			return;
		}
		const received: Buffer[] = [];
		const server = https.createServer(cert, (req, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (chunk: Buffer) => chunks.push(chunk));
			req.on('end', () => {
				received.push(Buffer.concat(chunks));
				res.end('ok');
			});
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		try {
			const url = `https://localhost:${(server.address() as AddressInfo).port}/hook`;
			const strict = await startSimulator(); // https needs no allowHttpCallbacks
			try {
				const strictToken = await accessToken(strict);
				expect((await subscribe(strict, strictToken, { url, suffix: 'patient', eventName: 'patient-created' })).status).toBe(201);
				const event = await strict.emit('patient', 'patient-created', { id: 5 });
				expect(event.logs.map((log) => log.response_code)).toEqual([200]);
				expect(received.map((b) => b.toString('utf8'))).toEqual([JSON.stringify({ value: { id: 5 } })]);
			} finally {
				await strict.close();
			}
		} finally {
			await new Promise((resolve) => {
				server.close(resolve);
				server.closeAllConnections();
			});
		}
	});
});
