/**
 * A strict, in-process fake of both hosts of the clinic service, written from
 * ../shared/spec/clinic-api.md and its field notes: the main API (under /api/v1)
 * and the webhook service (at its root), plus a control surface under /__sim/ on
 * the main host. Plain Node `http`, no runtime dependencies, silent in library mode.
 *
 *   const sim = await startSimulator();
 *   // sim.apiBaseUrl, sim.webhooksBaseUrl, sim.demo, ...
 *   await sim.close();
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { handleApi } from './api';
import { DEMO_ACCOUNT, PORTAL_DEMO, TWO_FACTOR_ACCOUNT } from './auth';
import { CONTROL_PREFIX, handleControl } from './control';
import { SimState, resolveOptions } from './core';
import { statusReply, withoutOffset } from './faults';
import { type Call, HttpError, type Reply, bodyForLog, errorReply, isPlainObject, parseCall, readRaw, send } from './http';
import type { HostName, Simulator, SimulatorOptions, TokenKind, TokenPlacement } from './types';
import { handleWebhooks } from './webhooks';

export * from './types';
export { passwordCredentialData } from './credentials';
export type { Store } from './store';
export { sign as signDelivery } from './deliveries';

const MAX_BODY_BYTES = 5 * 1024 * 1024;
const MAX_INTERNAL_ERRORS = 100;
/** The connection is destroyed without an answer (faults reset and stall). */
const DROP = Symbol('drop the connection');

/** Keys whose values are access or portal tokens wherever they appear. */
const ACCESS_TOKEN_KEYS = ['service_access_token', 'access_token', 'token'];

function tokensIn(call: Call, body: unknown, cfdiTokenParam: string): Array<[TokenPlacement, string]> {
	const found: Array<[TokenPlacement, string]> = [];
	if (call.bearer) found.push(['header', call.bearer]);
	if (isPlainObject(body)) {
		for (const key of ACCESS_TOKEN_KEYS) {
			const value = body[key];
			if (typeof value === 'string' && value !== '') found.push(['body', value]);
		}
	}
	for (const key of new Set([cfdiTokenParam, ...ACCESS_TOKEN_KEYS])) {
		const value = call.query[key];
		if (value) found.push(['query', value]);
	}
	return found;
}

function redact(value: unknown, secretKeys: Set<string>, depth = 0): unknown {
	if (depth > 8) return value;
	if (Array.isArray(value)) return value.map((item) => redact(item, secretKeys, depth + 1));
	if (!isPlainObject(value)) return value;
	const out: Record<string, unknown> = {};
	for (const [key, item] of Object.entries(value)) {
		if (key === 'password') out[key] = '<redacted>';
		else if (secretKeys.has(key) && typeof item === 'string') out[key] = '<token>';
		else out[key] = redact(item, secretKeys, depth + 1);
	}
	return out;
}

function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
	return new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(port, host, () => {
			server.off('error', reject);
			resolve((server.address() as AddressInfo).port);
		});
	});
}

function closeServer(server: http.Server): Promise<void> {
	return new Promise((resolve) => {
		server.close(() => resolve());
		server.closeAllConnections();
	});
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
	const resolved = resolveOptions(options);
	const state = new SimState(resolved);
	const redactKeys = new Set([...ACCESS_TOKEN_KEYS, 'refresh_token', resolved.cfdiTokenParam]);

	const urls = { apiOrigin: '', apiBaseUrl: '', webhooksBaseUrl: '' };
	const info = () => ({
		...urls,
		topicPrefix: resolved.topicPrefix,
		demo: { ...DEMO_ACCOUNT },
		twoFactor: { ...TWO_FACTOR_ACCOUNT },
		portalDemo: { ...PORTAL_DEMO },
		cfdiTokenParam: resolved.cfdiTokenParam,
		allowHttpCallbacks: resolved.allowHttpCallbacks,
	});

	async function answer(host: HostName, call: Call, onGone: (listener: () => void) => void): Promise<Reply | typeof DROP> {
		if (host === 'api' && (call.path === CONTROL_PREFIX || call.path.startsWith(`${CONTROL_PREFIX}/`))) {
			return await handleControl({ state, info }, call);
		}
		const logBody = bodyForLog(call);
		const found = tokensIn(call, logBody, resolved.cfdiTokenParam);
		const kinds = new Set(found.map(([, token]) => state.auth.classify(token)));
		const tokenKind: TokenKind = kinds.size === 0 ? 'none' : kinds.size === 1 ? [...kinds][0] : 'invalid';
		const tokenPlacement = [...new Set(found.map(([placement]) => placement))];

		const fault = state.faults.take(host, call);
		const log = (status: number) =>
			state.addLog({
				host,
				method: call.method,
				path: call.path,
				query: redact(call.query, redactKeys) as Record<string, string>,
				body: redact(logBody, redactKeys),
				tokenPlacement,
				tokenKind,
				status,
				...(fault ? { fault: fault.kind } : {}),
			});
		if (fault?.kind === 'stall') {
			log(0);
			if ((await state.faults.hold(fault.ms, onGone)) === 'drop') return DROP;
		} else if (fault?.kind === 'status') {
			const reply = statusReply(fault);
			log(reply.status);
			return reply;
		}
		// The log keeps what was sent; the handler sees the request as the faulty service reads it.
		const handled = fault?.kind === 'ignore-offset' ? withoutOffset(call) : call;

		const refusedFor = state.requestStarted();
		let reply: Reply;
		try {
			if (state.latencyMs > 0) await sleep(state.latencyMs);
			if (refusedFor !== undefined) {
				reply = { status: 429, json: { error: 'Too Many Requests' }, headers: { 'retry-after': String(refusedFor) } };
			} else {
				try {
					reply = host === 'api' ? await handleApi(state, handled) : await handleWebhooks(state, handled);
				} catch (error) {
					if (!(error instanceof HttpError)) throw error;
					reply = errorReply(error);
				}
			}
		} finally {
			state.requestEnded(refusedFor === undefined);
		}
		if (fault?.kind !== 'stall') log(reply.status);
		// A reset comes after the request took effect: the client never learns that it did.
		return fault?.kind === 'reset' ? DROP : reply;
	}

	function handler(host: HostName) {
		return (req: http.IncomingMessage, res: http.ServerResponse) => {
			const onGone = (listener: () => void) => res.once('close', listener);
			readRaw(req, MAX_BODY_BYTES)
				.then((raw) => answer(host, parseCall(req, raw), onGone))
				.catch((error: unknown) => {
					if (error instanceof HttpError) return errorReply(error);
					const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
					state.internalErrors.push(`${req.method} ${req.url?.split('?')[0]}: ${message}`);
					if (state.internalErrors.length > MAX_INTERNAL_ERRORS) state.internalErrors.shift();
					return { status: 500, json: { error: 'Internal Server Error' } } as Reply;
				})
				.then((reply) => {
					if (reply === DROP) res.destroy();
					else if (!res.headersSent && !res.destroyed) send(res, reply);
				})
				.catch(() => res.destroy());
		};
	}

	const apiServer = http.createServer(handler('api'));
	const webhooksServer = http.createServer(handler('webhooks'));
	for (const server of [apiServer, webhooksServer]) server.keepAliveTimeout = 30_000;
	const hostForUrl = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;
	const apiPort = await listen(apiServer, resolved.apiPort, resolved.host);
	let webhooksPort: number;
	try {
		webhooksPort = await listen(webhooksServer, resolved.webhooksPort, resolved.host);
	} catch (error) {
		await closeServer(apiServer);
		throw error;
	}
	urls.apiOrigin = `http://${hostForUrl}:${apiPort}`;
	urls.apiBaseUrl = `${urls.apiOrigin}/api/v1`;
	urls.webhooksBaseUrl = `http://${hostForUrl}:${webhooksPort}`;

	let closing: Promise<void> | undefined;
	const simulator: Simulator = {
		apiOrigin: urls.apiOrigin,
		apiBaseUrl: urls.apiBaseUrl,
		webhooksBaseUrl: urls.webhooksBaseUrl,
		topicPrefix: resolved.topicPrefix,
		demo: { ...DEMO_ACCOUNT },
		twoFactor: { ...TWO_FACTOR_ACCOUNT },
		portalDemo: { ...PORTAL_DEMO },
		get log() {
			return state.log;
		},
		get data() {
			return state.store;
		},
		clearLog: () => state.clearLog(),
		tokenRequests: (grant) => state.tokenRequests(grant),
		tokenRequestCounts: () => state.tokenRequestCounts(),
		refreshTokenStatus: (token) => state.auth.refreshTokenStatus(token),
		setReuseRevokesChain: (on) => {
			state.auth.reuseRevokesChain = on;
		},
		revokeAccessTokens: () => state.auth.revokeAccessTokens(),
		issueRefreshToken: (username) => state.auth.issueRefreshToken(username),
		issuedTokens: () => state.auth.issuedTokens(),
		revokeAllTokens: () => state.auth.revokeAll(),
		expireAccessTokens: () => state.auth.expireAccessTokens(),
		setTokenLifetime: (seconds) => {
			state.auth.lifetimeSeconds = seconds;
		},
		setLatency: (ms) => {
			state.latencyMs = ms;
		},
		setRateLimit: (limit) => state.setRateLimit(limit),
		addFault: (fault) => state.faults.add(fault),
		clearFaults: () => state.faults.clear(),
		faults: () => ({ faults: state.faults.list(), hits: state.faults.hits, held: state.faults.heldCount() }),
		inFlight: () => state.inFlight(),
		setDuplicateDeliveries: (mode) => state.setDuplicates(mode),
		setDeliveryBody: (shape) => state.setDeliveryBody(shape),
		setEventParams: (mode) => state.setEventParams(mode),
		setEventOrder: (order) => state.setEventOrder(order),
		setEventsPageCap: (cap) => {
			state.eventsPageCap = cap;
		},
		onEventsPage: (hook) => {
			state.afterEventsPage = hook;
		},
		emit: (suffix, name, value) => state.emitAndSettle(suffix, name, value),
		emitLate: (suffix, name, value, commitAfterMs) => {
			const { id, committed } = state.bus.emitLate(suffix, name, value, commitAfterMs);
			return {
				id,
				record: committed.then(async ({ record, settled }) => {
					await settled;
					return record;
				}),
			};
		},
		finishConsultation: () => state.finishConsultation(),
		seedEvents: (count, suffix, name, valueOf) => state.seedEvents(count, suffix, name, valueOf),
		seedInvoices: (count) => state.seedInvoices(count),
		deliveriesSettled: () => state.bus.settled(),
		deliveryStatus: (eventId) => state.bus.deliveryStatus(eventId),
		eventDeliveriesSettled: (eventId) => state.bus.eventSettled(eventId),
		subscriptions: () => [...state.bus.subscriptions],
		stopSubscription: (id, how) => state.bus.stop(id, how),
		events: () => [...state.bus.events],
		reset: () => state.reset(),
		internalErrors: () => [...state.internalErrors],
		close: () => {
			closing ??= (async () => {
				await state.bus.close();
				state.faults.clear();
				await Promise.all([closeServer(apiServer), closeServer(webhooksServer)]);
			})();
			return closing;
		},
	};
	return simulator;
}
