/**
 * Shared pieces of the trigger tests: credentials for the simulator, a proxy in front
 * of the webhook service that can refuse chosen requests, and a small HTTP server that
 * hands each request it receives to the trigger's webhook() through n8n-core.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject, INodeParameters } from 'n8n-workflow';

import type { CredentialStore } from '../helpers/credentialsHelper';
import { TRIGGER_WEBHOOK_ID, deliverWebhook } from '../helpers/trigger';
import type { DeliverWebhookOptions, DeliveryResult, HookResult } from '../helpers/trigger';
import { signDelivery } from '../simulator';
import type { Simulator } from '../simulator';
import type { EventRecord } from '../simulator/types';

export const PATIENT_CREATED = 'patient:patient-created';
export const CONSULTATION_FINISHED = 'consultation:consultation-finished';
export const SCHEDULE_CREATE = 'consultation-schedule:consultation-schedule-create';
export const TWR_JOINED = 'waiting-room:patient-joined-twr';

export function credentialsFor(sim: Simulator, webhookBaseUrl = sim.webhooksBaseUrl) {
	return {
		clinicApi: {
			baseUrl: sim.apiBaseUrl,
			webhookBaseUrl,
			topicPrefix: sim.topicPrefix,
			username: sim.demo.username,
			password: sim.demo.password,
		},
	};
}

/** A trigger activated on patient-created, and its subscription's secret. */
export interface PatientCreatedTrigger {
	parameters: INodeParameters;
	activated: HookResult;
	secret: string;
}

/** Delivers a patient-created `value` as the service does (signed with the subscription's secret) into webhook(). */
export async function deliverSigned(
	trigger: PatientCreatedTrigger,
	value: IDataObject,
	storeRun?: DeliverWebhookOptions['storeRun'],
): Promise<DeliveryResult> {
	const rawBody = Buffer.from(JSON.stringify({ value }));
	return await deliverWebhook({
		parameters: trigger.parameters,
		store: trigger.activated.store,
		staticData: trigger.activated.staticData,
		rawBody,
		headers: { 'content-type': 'application/json', signature: signDelivery(trigger.secret, rawBody) },
		query: { event: PATIENT_CREATED },
		storeRun,
	});
}

export function live(sim: Simulator) {
	return sim.subscriptions().filter((s) => s.status === 'enabled' && s.deleted_at === null);
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => resolve(Buffer.concat(chunks)));
		req.on('error', reject);
	});
}

function listen(server: http.Server): Promise<number> {
	return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function close(server: http.Server): Promise<void> {
	return new Promise((resolve) => {
		server.close(() => resolve());
		server.closeAllConnections();
	});
}

export interface Refusal {
	method: string;
	/** Path without query; a RegExp or an exact string. */
	path: string | RegExp;
	/** Refuse only the nth matching request (1-based); default every one. */
	nth?: number;
	status: number;
	body: unknown;
}

/** A proxy in front of the simulator's webhook host that refuses the requests it is told to. */
export async function startRefusingProxy(target: string) {
	const refusals: Refusal[] = [];
	const counts = new Map<Refusal, number>();
	const server = http.createServer((req, res) => {
		void (async () => {
			const raw = await readBody(req);
			const path = (req.url ?? '/').split('?')[0];
			for (const refusal of refusals) {
				const matches =
					refusal.method === req.method &&
					(typeof refusal.path === 'string' ? refusal.path === path : refusal.path.test(path));
				if (!matches) continue;
				const count = (counts.get(refusal) ?? 0) + 1;
				counts.set(refusal, count);
				if (refusal.nth === undefined || refusal.nth === count) {
					res.writeHead(refusal.status, { 'content-type': 'application/json' });
					res.end(JSON.stringify(refusal.body));
					return;
				}
			}
			const headers = { ...req.headers };
			delete headers.host;
			const upstream = http.request(`${target}${req.url ?? '/'}`, { method: req.method, headers }, (answer) => {
				res.writeHead(answer.statusCode ?? 502, answer.headers);
				answer.pipe(res);
			});
			upstream.on('error', () => {
				res.writeHead(502);
				res.end();
			});
			upstream.end(raw);
		})();
	});
	const port = await listen(server);
	return {
		url: `http://127.0.0.1:${port}`,
		refuse(refusal: Refusal) {
			refusals.push(refusal);
		},
		close: () => close(server),
	};
}

export interface ReceiverState {
	parameters: INodeParameters;
	store?: CredentialStore;
	staticData: IDataObject;
	mode?: 'trigger' | 'manual';
	/** The next runs the trigger starts that n8n fails to store: it answers 500, as n8n 2.x does then. */
	storeFailures?: number;
	/** How long n8n takes to store each run the trigger starts before it answers. */
	storeDelayMs?: number;
}

/**
 * Stands where n8n's webhook server stands: every request it receives goes to the
 * trigger's webhook() (n8n-core's WebhookContext) with the raw bytes, headers and query,
 * and the node's answer goes back to the sender. Executions that would start are recorded.
 */
export async function startReceiver(state: ReceiverState) {
	const results: DeliveryResult[] = [];
	let port = 0;
	const pathPrefix = () => (state.mode === 'manual' ? 'webhook-test' : 'webhook');
	const server = http.createServer((req, res) => {
		void (async () => {
			const rawBody = await readBody(req);
			const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
			const query: Record<string, string> = {};
			for (const [key, value] of url.searchParams) query[key] = value;
			const headers: Record<string, string> = {};
			for (const [key, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[key] = value;
			const result = await deliverWebhook({
				parameters: state.parameters,
				store: state.store,
				staticData: state.staticData,
				mode: state.mode,
				webhookUrl: `http://127.0.0.1:${port}${url.pathname}`,
				rawBody,
				headers,
				query,
				storeRun: {
					delayMs: state.storeDelayMs,
					fails: () => {
						// Each run n8n fails to store uses up one of the failures asked for.
						if (!state.storeFailures) return false;
						state.storeFailures -= 1;
						return true;
					},
				},
			});
			results.push(result);
			// n8n 2.x saves what webhook() changed in static data when the node answered itself,
			// or once it stored the run webhook() started (workflowData is gone when it did not).
			if ((result.noWebhookResponse || result.workflowData) && result.staticDataChanged && !result.error) state.staticData = result.staticData;
			// n8n answers 500 when webhook() throws (a delivery that failed), whatever was set before.
			const body = result.error ? { code: 0, message: result.error.message } : result.response.body;
			res.writeHead(result.error ? 500 : result.response.status, { 'content-type': 'application/json' });
			res.end(body === undefined ? '' : JSON.stringify(body));
		})().catch(() => {
			res.writeHead(500);
			res.end();
		});
	});
	port = await listen(server);
	return {
		webhookUrl: () => `http://127.0.0.1:${port}/${pathPrefix()}/${TRIGGER_WEBHOOK_ID}/webhook`,
		results,
		executions: () => results.filter((r) => r.workflowData !== undefined),
		close: () => close(server),
	};
}

/** What someone else (another tool, a user with curl) does on the webhook service. */
export async function serviceCall(sim: Simulator, method: 'POST' | 'DELETE', path: string, body: IDataObject = {}) {
	const tokenAnswer = await fetch(`${sim.apiBaseUrl}/oauth/token`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ grant_type: 'password', username: sim.demo.username, password: sim.demo.password }),
	});
	const { access_token: token } = (await tokenAnswer.json()) as { access_token: string };
	const answer = await fetch(`${sim.webhooksBaseUrl}${path}`, {
		method,
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ ...body, service_access_token: token }),
	});
	return { status: answer.status, body: (await answer.json()) as IDataObject };
}

/** Logs a patient-created event now, as the service does before delivering it; answers the live record. */
export function logNow(sim: Simulator, value: IDataObject) {
	sim.seedEvents(1, 'patient', 'patient-created', () => value);
	const record = sim.events().at(-1)!;
	record.created_at = new Date().toISOString();
	return record;
}

/** Writes one try into an event's delivery log, as the service does once a delivery to `url` was answered. */
export function logTry(record: EventRecord, url: string, code: number | null, response = '') {
	const secret = { secret: '' };
	const at = new Date().toISOString();
	record.logs.push({ id: record.logs.length + 1, target_url: url, authentication_data: secret, request: '', response, event_id: String(record.id), response_code: code, retries_left: 3, created_at: at });
}
