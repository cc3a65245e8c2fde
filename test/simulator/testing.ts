/**
 * Helpers for the simulator's own tests (and for anyone else's): a token, JSON calls,
 * a GET with a JSON body (fetch cannot send one), and a callback receiver.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { fullTopic } from '../../nodes/shared/catalog';
import type { Simulator } from './types';

export interface Answer {
	status: number;
	headers: http.IncomingHttpHeaders;
	raw: Buffer;
	text: string;
	/** The body parsed as JSON (undefined when it is not JSON); tests read it loosely. */
	json: any;
}

/** A request with Node's http client: any method may carry a body (GET /events needs that). */
export function request(
	url: string,
	options: { method?: string; headers?: Record<string, string>; body?: unknown; form?: Record<string, string> } = {},
): Promise<Answer> {
	const headers: Record<string, string> = { ...options.headers };
	let payload: string | undefined;
	if (options.form) {
		payload = new URLSearchParams(options.form).toString();
		headers['content-type'] ??= 'application/x-www-form-urlencoded';
	} else if (options.body !== undefined) {
		payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
		headers['content-type'] ??= 'application/json';
	}
	if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
	return new Promise((resolve, reject) => {
		const req = http.request(url, { method: options.method ?? 'GET', headers }, (res) => {
			const chunks: Buffer[] = [];
			res.on('data', (chunk: Buffer) => chunks.push(chunk));
			res.on('end', () => {
				const raw = Buffer.concat(chunks);
				const text = raw.toString('utf8');
				let json: unknown;
				try {
					json = text ? JSON.parse(text) : undefined;
				} catch {
					json = undefined;
				}
				resolve({ status: res.statusCode ?? 0, headers: res.headers, raw, text, json });
			});
			res.on('error', reject);
		});
		req.on('error', reject);
		req.end(payload);
	});
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** Password grant for the demo account (form body, as the spec shows it). */
export async function passwordGrant(sim: Simulator, account = sim.demo): Promise<Answer> {
	return request(`${sim.apiBaseUrl}/oauth/token`, {
		method: 'POST',
		form: { grant_type: 'password', username: account.username, password: account.password },
	});
}

export async function accessToken(sim: Simulator): Promise<string> {
	const answer = await passwordGrant(sim);
	if (answer.status !== 200) throw new Error(`password grant answered ${answer.status}: ${answer.text}`);
	return answer.json.access_token as string;
}

/** A main-API call with the bearer header; `path` is relative to /api/v1. */
export function api(
	sim: Simulator,
	token: string | undefined,
	path: string,
	options: { method?: string; body?: unknown } = {},
): Promise<Answer> {
	return request(`${sim.apiBaseUrl}${path}`, { ...options, headers: token ? bearer(token) : {} });
}

export async function portalToken(sim: Simulator): Promise<string> {
	const { countryCode, phone, code } = sim.portalDemo;
	await request(`${sim.apiBaseUrl}/patient_portal/auth`, {
		method: 'POST',
		body: { country_code: countryCode, phone },
	});
	const answer = await request(`${sim.apiBaseUrl}/patient_portal/validate`, {
		method: 'POST',
		body: { code, country_code: countryCode, phone },
	});
	if (answer.status !== 200) throw new Error(`portal validate answered ${answer.status}: ${answer.text}`);
	return answer.json.token as string;
}

export interface Received {
	headers: http.IncomingHttpHeaders;
	raw: Buffer;
	at: number;
}

export interface Receiver {
	url: string;
	received: Received[];
	close(): Promise<void>;
}

/** A callback receiver answering `statusFor(n)` to its n-th request (1-based). */
export async function startReceiver(statusFor: (n: number) => number = () => 200): Promise<Receiver> {
	const received: Received[] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			received.push({ headers: req.headers, raw: Buffer.concat(chunks), at: Date.now() });
			const status = statusFor(received.length);
			res.writeHead(status, { 'content-type': 'text/plain' });
			res.end(status < 300 ? 'ok' : 'receiver failed');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/hook`,
		received,
		close: () =>
			new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}

/** Subscribes a callback URL with the token in the body, as the spec wants. */
export async function subscribe(
	sim: Simulator,
	token: string,
	fields: { url: string; suffix: string; eventName: string; secret?: string },
): Promise<Answer> {
	return request(`${sim.webhooksBaseUrl}/webhooks`, {
		method: 'POST',
		body: {
			url: fields.url,
			topic: fullTopic(sim.topicPrefix, fields.suffix),
			event_name: fields.eventName,
			authentication_data: { secret: fields.secret ?? 'a-strong-shared-secret' },
			service_access_token: token,
		},
	});
}
