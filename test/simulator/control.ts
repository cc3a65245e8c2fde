/**
 * The control surface under /__sim/ on the main host: what another process (n8n
 * end-to-end tests, benchmarks) uses to drive the simulator. No authentication, no
 * latency, no rate limit, not in the request log. Bodies are JSON (any content type).
 */
import type { SimState } from './core';
import { assertCatalogEvent } from './deliveries';
import { type Call, type Reply, type Route, HttpError, badRequest, dispatch, isPlainObject, ok } from './http';
import { storeSnapshot } from './store';
import type { DeliveryBodyShape, DuplicateMode, EventOrder, EventParamsMode, Fault } from './types';

export const CONTROL_PREFIX = '/__sim';

export interface ControlContext {
	state: SimState;
	info: () => Record<string, unknown>;
}

function body(call: Call): unknown {
	if (call.raw.length === 0) return undefined;
	try {
		return JSON.parse(call.raw.toString('utf8'));
	} catch {
		throw badRequest('Control requests take a JSON body');
	}
}

function object(call: Call): Record<string, unknown> {
	const value = body(call);
	if (value === undefined) return {};
	if (!isPlainObject(value)) throw badRequest('Expected a JSON object');
	return value;
}

function numberField(input: Record<string, unknown>, field: string, min = 0): number {
	const value = input[field];
	if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
		throw badRequest(`${field} must be a number >= ${min}`);
	}
	return value;
}

function stringField(input: Record<string, unknown>, field: string): string {
	const value = input[field];
	if (typeof value !== 'string' || value === '') throw badRequest(`${field} must be a non-empty string`);
	return value;
}

const done = (): Reply => ok({ ok: true });

/** Turns setter errors (plain Error) into 400 answers. */
function guarded<T>(work: () => T): T {
	try {
		return work();
	} catch (error) {
		if (error instanceof HttpError) throw error;
		throw badRequest((error as Error).message);
	}
}

const routes: Array<Route<ControlContext>> = [
	{ method: 'GET', pattern: /^\/info$/, handler: (ctx) => ok(ctx.info()) },
	{ method: 'GET', pattern: /^\/log$/, handler: (ctx) => ok({ log: ctx.state.log }) },
	{ method: 'GET', pattern: /^\/in-flight$/, handler: (ctx) => ok(ctx.state.inFlight()) },
	{
		method: 'POST',
		pattern: /^\/clear-log$/,
		handler: (ctx) => {
			ctx.state.clearLog();
			return done();
		},
	},
	{
		method: 'GET',
		pattern: /^\/token-requests$/,
		handler: (ctx) => ok(ctx.state.tokenRequestCounts()),
	},
	{
		method: 'POST',
		pattern: /^\/revoke-access-tokens$/,
		handler: (ctx) => {
			ctx.state.auth.revokeAccessTokens();
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/reuse-revokes-chain$/,
		handler: (ctx, call) => {
			const on = object(call).on;
			if (typeof on !== 'boolean') throw badRequest('on must be true or false');
			ctx.state.auth.reuseRevokesChain = on;
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/refresh-token-status$/,
		handler: (ctx, call) => ok(ctx.state.auth.refreshTokenStatus(stringField(object(call), 'refresh_token'))),
	},
	{
		method: 'POST',
		pattern: /^\/revoke-tokens$/,
		handler: (ctx) => {
			ctx.state.auth.revokeAll();
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/expire-access-tokens$/,
		handler: (ctx) => {
			ctx.state.auth.expireAccessTokens();
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/token-lifetime$/,
		handler: (ctx, call) => {
			ctx.state.auth.lifetimeSeconds = Math.floor(numberField(object(call), 'seconds', 0));
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/latency$/,
		handler: (ctx, call) => {
			ctx.state.latencyMs = numberField(object(call), 'ms', 0);
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/rate-limit$/,
		handler: (ctx, call) => {
			const value = body(call);
			if (value === undefined || value === null || (isPlainObject(value) && Object.keys(value).length === 0)) {
				ctx.state.setRateLimit(null);
				return done();
			}
			if (!isPlainObject(value)) throw badRequest('Expected {every, requestsPerSecond, maxInFlight, retryAfterSeconds} or null');
			const limit = Object.fromEntries(
				(['every', 'requestsPerSecond', 'maxInFlight', 'retryAfterSeconds'] as const)
					.filter((key) => value[key] !== undefined)
					.map((key) => [key, numberField(value, key, 0)]),
			);
			guarded(() => ctx.state.setRateLimit(limit));
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/faults$/,
		handler: (ctx, call) => ok({ id: guarded(() => ctx.state.faults.add(object(call) as unknown as Fault)) }),
	},
	{
		method: 'GET',
		pattern: /^\/faults$/,
		handler: (ctx) => ok({ faults: ctx.state.faults.list(), hits: ctx.state.faults.hits, held: ctx.state.faults.heldCount() }),
	},
	{
		method: 'POST',
		pattern: /^\/clear-faults$/,
		handler: (ctx) => {
			ctx.state.faults.clear();
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/event-params$/,
		handler: (ctx, call) => {
			const mode = stringField(object(call), 'mode') as EventParamsMode;
			guarded(() => ctx.state.setEventParams(mode));
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/event-order$/,
		handler: (ctx, call) => {
			const order = stringField(object(call), 'order') as EventOrder;
			guarded(() => ctx.state.setEventOrder(order));
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/delivery-body$/,
		handler: (ctx, call) => {
			const shape = stringField(object(call), 'shape') as DeliveryBodyShape;
			guarded(() => ctx.state.setDeliveryBody(shape));
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/duplicates$/,
		handler: (ctx, call) => {
			const mode = stringField(object(call), 'mode') as DuplicateMode;
			guarded(() => ctx.state.setDuplicates(mode));
			return done();
		},
	},
	{
		method: 'POST',
		pattern: /^\/emit$/,
		handler: async (ctx, call) => {
			const input = object(call);
			const suffix = stringField(input, 'topicSuffix');
			const name = stringField(input, 'eventName');
			guarded(() => assertCatalogEvent(suffix, name));
			return ok(await ctx.state.emitAndSettle(suffix, name, input.value ?? {}));
		},
	},
	{
		// The demo's "finish a consultation": a fresh one each call, so the flagship runs every time.
		method: 'POST',
		pattern: /^\/finish-consultation$/,
		handler: async (ctx) => ok(await ctx.state.finishConsultation()),
	},
	{
		method: 'POST',
		pattern: /^\/seed-events$/,
		handler: (ctx, call) => {
			const input = object(call);
			const count = numberField(input, 'count', 0);
			const suffix = input.topicSuffix === undefined ? undefined : stringField(input, 'topicSuffix');
			const name = input.eventName === undefined ? undefined : stringField(input, 'eventName');
			guarded(() => ctx.state.seedEvents(count, suffix, name));
			return ok({ count, total: ctx.state.bus.events.length });
		},
	},
	{
		method: 'POST',
		pattern: /^\/seed-invoices$/,
		handler: (ctx, call) => ok({ ids: guarded(() => ctx.state.seedInvoices(numberField(object(call), 'count', 0))) }),
	},
	{
		method: 'POST',
		pattern: /^\/refresh-token$/,
		handler: (ctx, call) => {
			const username = stringField(object(call), 'username');
			return ok({ refresh_token: guarded(() => ctx.state.auth.issueRefreshToken(username)) });
		},
	},
	{ method: 'GET', pattern: /^\/subscriptions$/, handler: (ctx) => ok({ subscriptions: ctx.state.bus.subscriptions }) },
	{
		method: 'POST',
		pattern: /^\/subscriptions\/(\d+)\/(disable|delete)$/,
		handler: (ctx, _call, [id, how]) => {
			if (!ctx.state.bus.stop(Number(id), how as 'disable' | 'delete')) throw badRequest(`No live subscription ${id}`);
			return done();
		},
	},
	{ method: 'GET', pattern: /^\/events$/, handler: (ctx) => ok({ events: ctx.state.bus.events }) },
	{ method: 'GET', pattern: /^\/state$/, handler: (ctx) => ok(storeSnapshot(ctx.state.store)) },
	{
		method: 'POST',
		pattern: /^\/deliveries-settled$/,
		handler: async (ctx) => {
			await ctx.state.bus.settled();
			return done();
		},
	},
	{
		method: 'GET',
		pattern: /^\/deliveries\/(\d+)$/,
		handler: (ctx, _call, [id]) => {
			const status = ctx.state.bus.deliveryStatus(Number(id));
			if (!status) throw new HttpError(404, { error: `No event ${id}` });
			return ok(status);
		},
	},
	{
		// Answers once no attempt of this event's deliveries can come any more.
		method: 'POST',
		pattern: /^\/deliveries\/(\d+)\/settled$/,
		handler: async (ctx, _call, [id]) => {
			if (!ctx.state.bus.deliveryStatus(Number(id))) throw new HttpError(404, { error: `No event ${id}` });
			return ok(await ctx.state.bus.eventSettled(Number(id)));
		},
	},
	{ method: 'GET', pattern: /^\/errors$/, handler: (ctx) => ok({ errors: ctx.state.internalErrors }) },
	{
		method: 'POST',
		pattern: /^\/reset$/,
		handler: (ctx) => {
			ctx.state.reset();
			return done();
		},
	},
];

export async function handleControl(ctx: ControlContext, call: Call): Promise<Reply> {
	return await dispatch(routes, ctx, call, call.path.slice(CONTROL_PREFIX.length) || '/');
}
