/**
 * The webhook service host: /webhooks, /webhooks/{id} and /events at its root (no
 * /api/v1, no token endpoint). POST and DELETE take the integration token in the
 * JSON body as `service_access_token` and only there; GETs take the bearer header.
 */
import { findTopic, splitTopic } from '../../nodes/shared/catalog';
import type { SimState } from './core';
import {
	type Call,
	type Reply,
	type Route,
	dispatch,
	invalid,
	isJsonType,
	isPlainObject,
	jsonBody,
	notFound,
	ok,
	toInteger,
	unauthorized,
} from './http';

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 100;

function bearerUser(state: SimState, call: Call): void {
	if (!state.auth.integrationUser(call.bearer)) throw unauthorized();
}

function bodyTokenUser(state: SimState, body: Record<string, unknown>): void {
	const token = body.service_access_token;
	if (typeof token !== 'string' || !state.auth.integrationUser(token)) throw unauthorized();
}

function isLoopback(hostname: string): boolean {
	return (
		hostname === 'localhost' ||
		hostname === '[::1]' ||
		hostname === '::1' ||
		/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
	);
}

function callbackUrlProblem(state: SimState, value: unknown): string | undefined {
	if (typeof value !== 'string' || value.trim() === '') return "can't be blank";
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		return 'is not a valid URL';
	}
	if (url.protocol === 'https:') return undefined;
	if (url.protocol === 'http:' && state.options.allowHttpCallbacks && isLoopback(url.hostname)) return undefined;
	return state.options.allowHttpCallbacks
		? 'must be an HTTPS URL (http:// is accepted for loopback hosts only)'
		: 'must be an HTTPS URL';
}

function createWebhook(state: SimState, call: Call): Reply {
	const body = jsonBody(call);
	bodyTokenUser(state, body);
	const errors: Record<string, string[]> = {};
	const urlProblem = callbackUrlProblem(state, body.url);
	if (urlProblem) errors.url = [urlProblem];

	const prefix = state.options.topicPrefix;
	const topic = typeof body.topic === 'string' ? body.topic : '';
	const split = splitTopic(topic);
	const topicDefinition = split && split.prefix === prefix ? findTopic(split.suffix) : undefined;
	if (!topic) errors.topic = ["can't be blank"];
	else if (!topicDefinition) errors.topic = [`is not a topic of this organization; topics read ${prefix}.<suffix>`];

	const eventName = body.event_name;
	if (typeof eventName !== 'string' || eventName === '') {
		errors.event_name = ["can't be blank"];
	} else if (topicDefinition && !topicDefinition.events.includes(eventName)) {
		errors.event_name = [`is not an event of ${topic} (${topicDefinition.events.join(', ')})`];
	}

	const authentication = body.authentication_data;
	const secret = isPlainObject(authentication) ? authentication.secret : undefined;
	if (typeof secret !== 'string' || secret === '') errors['authentication_data.secret'] = ["can't be blank"];

	if (Object.keys(errors).length > 0) throw invalid(errors);
	const webhook = state.bus.subscribe({
		url: body.url as string,
		topic,
		eventName: eventName as string,
		secret: secret as string,
	});
	return ok({ webhook }, 201);
}

function listWebhooks(state: SimState, call: Call): Reply {
	bearerUser(state, call);
	return ok({ webhooks: state.bus.subscriptions });
}

function deleteWebhook(state: SimState, call: Call, [id]: string[]): Reply {
	const body = jsonBody(call);
	bodyTokenUser(state, body);
	if (!state.bus.unsubscribe(Number(id))) throw notFound('Webhook not found');
	return ok({ deleted: [{ id: Number(id) }] });
}

function listEvents(state: SimState, call: Call): Reply {
	bearerUser(state, call);
	// The spec declares the parameters in a JSON body on the GET; eventParams says which
	// place(s) this service reads (body wins when both are read).
	const mode = state.eventParams;
	const fromBody = mode !== 'query' && call.raw.length > 0 && isJsonType(call.mediaType) ? jsonBody(call) : {};
	const fromQuery = mode !== 'body' ? call.query : {};
	const params: Record<string, unknown> = { ...fromQuery, ...fromBody };
	const errors: Record<string, string[]> = {};
	let offset = 0;
	let limit = DEFAULT_LIMIT;
	if (params.offset !== undefined && params.offset !== null && params.offset !== '') {
		const value = toInteger(params.offset);
		if (value === undefined || value < 0) errors.offset = ['must be an integer greater than or equal to 0'];
		else offset = value;
	}
	if (params.limit !== undefined && params.limit !== null && params.limit !== '') {
		const value = toInteger(params.limit);
		if (value === undefined || value < 1) errors.limit = ['must be an integer greater than 0'];
		else limit = Math.min(value, MAX_LIMIT);
	}
	for (const field of ['topic', 'name']) {
		if (params[field] !== undefined && params[field] !== null && typeof params[field] !== 'string') {
			errors[field] = ['must be a string'];
		}
	}
	if (Object.keys(errors).length > 0) throw invalid(errors);
	limit = Math.min(limit, state.eventsPageCap ?? limit);
	const topic = params.topic as string | undefined;
	const name = params.name as string | undefined;

	// Events are kept in id order; walk them in the listed order, filter lazily and stop once the page is full.
	const all = state.bus.events;
	const newestFirst = state.eventOrder === 'newest-first';
	if (!topic && !name) {
		const slice = newestFirst
			? all.slice(Math.max(0, all.length - offset - limit), Math.max(0, all.length - offset)).reverse()
			: all.slice(offset, offset + limit);
		state.afterEventsPage?.(slice);
		return ok(slice);
	}
	const page = [];
	let skipped = 0;
	for (let i = 0; i < all.length; i++) {
		const event = all[newestFirst ? all.length - 1 - i : i];
		if (topic && event.topic !== topic) continue;
		if (name && event.name !== name) continue;
		if (skipped < offset) {
			skipped++;
			continue;
		}
		page.push(event);
		if (page.length === limit) break;
	}
	state.afterEventsPage?.(page);
	return ok(page);
}

const routes: Array<Route<SimState>> = [
	{ method: 'POST', pattern: /^\/webhooks$/, handler: createWebhook },
	{ method: 'GET', pattern: /^\/webhooks$/, handler: listWebhooks },
	{ method: 'DELETE', pattern: /^\/webhooks\/(\d+)$/, handler: deleteWebhook },
	{ method: 'GET', pattern: /^\/events$/, handler: listEvents },
];

export async function handleWebhooks(state: SimState, call: Call): Promise<Reply> {
	return await dispatch(routes, state, call, call.path);
}
