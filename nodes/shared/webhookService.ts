/**
 * The one client of the separate webhook service, for the action node and both triggers:
 * - subscriptions (`/webhooks`): list, create, remove, and what "live" means;
 * - the event log (`GET /events`): where its parameters travel, how pages are read, what
 *   an answer looks like, and how an event is shown to users.
 */
import type {
	IDataObject,
	IExecuteFunctions,
	INode,
	IPollFunctions,
	IWebhookFunctions,
	JsonObject,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { ClinicClient } from './transport';
import type { Authentication } from './transport';

// ---- subscriptions ----------------------------------------------------------------

/** A subscription as GET /webhooks lists it. */
export interface RemoteSubscription extends IDataObject {
	id: number | string;
	url?: string;
	event_topic?: string;
	event_name?: string;
	status?: string;
	deleted_at?: string | null;
	authentication_data?: { secret?: string };
}

/** Live = enabled and not deleted (a subscription the service still delivers to). */
export function isLive(subscription: RemoteSubscription): boolean {
	const status = subscription.status;
	return (status === undefined || status === 'enabled') && !subscription.deleted_at;
}

/** The id in the (undocumented) answer to POST /webhooks: `{webhook: {id}}`, `{id}` or `{data: {id}}`. */
export function idFromCreateAnswer(answer: unknown): number | string | undefined {
	if (!answer || typeof answer !== 'object') return undefined;
	const record = answer as Record<string, unknown>;
	for (const candidate of [record.webhook, record.data, record]) {
		if (candidate && typeof candidate === 'object') {
			const id = (candidate as Record<string, unknown>).id;
			if (typeof id === 'number' || (typeof id === 'string' && id !== '')) return id;
		}
	}
	return undefined;
}

export interface NewSubscription {
	url: string;
	/** Complete topic, e.g. `clinic-38729.consultation`. */
	topic: string;
	eventName: string;
	secret: string;
}

/**
 * Subscriptions on the webhook service. The token goes where the service wants it
 * (the transport's rule): bearer on GET, in the JSON body on POST and DELETE.
 */
export class WebhookSubscriptions {
	constructor(
		private readonly client: ClinicClient,
		private readonly node: () => INode,
	) {}

	async list(itemIndex = 0): Promise<RemoteSubscription[]> {
		const answer = await this.client.request<unknown>(
			{ host: 'webhooks', method: 'GET', path: '/webhooks', auth: 'integration', subject: 'The webhook subscription list' },
			itemIndex,
		);
		const list = Array.isArray(answer) ? answer : (answer as { webhooks?: unknown } | null)?.webhooks;
		if (!Array.isArray(list)) {
			throw new NodeOperationError(this.node(), 'The webhook service answered the subscription list in an unexpected shape', {
				itemIndex,
				description: 'Expected {"webhooks": [...]}. Check the Webhook Service Base URL of the credential.',
			});
		}
		return list.filter(
			(item): item is RemoteSubscription =>
				!!item && typeof item === 'object' && ['number', 'string'].includes(typeof (item as RemoteSubscription).id),
		);
	}

	/** Subscribes; answers what the service answered (its shape is not documented). */
	async create(subscription: NewSubscription, subject: string, itemIndex = 0): Promise<unknown> {
		const { url, topic, eventName, secret } = subscription;
		return await this.client.request<unknown>(
			{
				host: 'webhooks',
				method: 'POST',
				path: '/webhooks',
				body: { url, topic, event_name: eventName, authentication_data: { secret } },
				auth: 'integration',
				subject,
			},
			itemIndex,
		);
	}

	/** Removes one subscription; the service's 404 reaches the caller as an error with httpCode 404. */
	async remove(id: number | string, itemIndex = 0): Promise<void> {
		await this.client.request(
			{
				host: 'webhooks',
				method: 'DELETE',
				path: `/webhooks/${encodeURIComponent(String(id))}`,
				body: {},
				auth: 'integration',
				subject: `Webhook subscription ${String(id)}`,
			},
			itemIndex,
		);
	}
}

// ---- the event log ----------------------------------------------------------------

/** What the service returns per event (fields we rely on; the rest passes through). */
export interface EventRecord extends IDataObject {
	id: number;
	topic: string;
	name: string;
	created_at: string;
	value: IDataObject;
	logs: IDataObject[];
}

/** Filters the service applies itself: a complete topic (`clinic-38729.consultation`) and an event name. */
export interface EventFilter {
	topic?: string;
	name?: string;
}

export type EventLogContext = IExecuteFunctions | IPollFunctions | IWebhookFunctions;

/** The delivery logs' shared secrets are taken out of an event before anyone sees it. */
export function redactEvent(event: IDataObject): IDataObject {
	if (!Array.isArray(event.logs)) return event;
	return {
		...event,
		logs: event.logs.map((log) => {
			if (!log || typeof log !== 'object') return log;
			const entry = log as IDataObject;
			const authentication = entry.authentication_data;
			if (!authentication || typeof authentication !== 'object' || Array.isArray(authentication)) {
				return { ...entry, hasSecret: false };
			}
			const { secret, ...rest } = authentication as IDataObject;
			return { ...entry, authentication_data: rest, hasSecret: secret !== undefined && secret !== null && secret !== '' };
		}),
	};
}

/** One page of the event log, as the service lists it, plus what was asked for. */
export interface EventPage {
	offset: number;
	limit: number;
	events: EventRecord[];
}

/** A reader of the event log: one per execution or poll. */
export class EventLog {
	constructor(
		private readonly ctx: EventLogContext,
		private readonly client: ClinicClient,
	) {}

	/** A reader with its own client, for a trigger. */
	static open(ctx: EventLogContext, authentication: Authentication): EventLog {
		return new EventLog(ctx, new ClinicClient(ctx, authentication));
	}

	/** The credential's topic prefix (for complete topics). */
	async topicPrefix(itemIndex = 0): Promise<string> {
		return (await this.client.integrationSettings(itemIndex)).topicPrefix;
	}

	/**
	 * One page. The spec declares offset, limit, topic and name in a JSON body on the GET,
	 * but some deployments read the query string: both carry the same values, so a service
	 * reading either place (or both) gets them.
	 */
	async page(filter: EventFilter, offset: number, limit: number, itemIndex = 0): Promise<EventPage> {
		const params: IDataObject = { offset, limit };
		if (filter.topic) params.topic = filter.topic;
		if (filter.name) params.name = filter.name;
		const body = await this.client.request<unknown>(
			{
				host: 'webhooks',
				method: 'GET',
				path: '/events',
				qs: params,
				body: { ...params },
				bodyOnGet: true,
				auth: 'integration',
				subject: 'The event log',
			},
			itemIndex,
		);
		return { offset, limit, events: this.recordsOf(body, itemIndex) };
	}

	private recordsOf(body: unknown, itemIndex: number): EventRecord[] {
		const list = Array.isArray(body)
			? body
			: body && typeof body === 'object' && Array.isArray((body as IDataObject).events)
				? ((body as IDataObject).events as unknown[])
				: undefined;
		if (!list) {
			throw new NodeOperationError(this.ctx.getNode(), 'The clinic service answered without a list of "events"', {
				itemIndex,
				description: 'Expected an array of events, or an object holding the array under "events".',
			});
		}
		for (const event of list) {
			const id = event && typeof event === 'object' ? (event as JsonObject).id : undefined;
			if (typeof id !== 'number' || !Number.isInteger(id)) {
				throw new NodeOperationError(this.ctx.getNode(), 'The clinic service listed an event without a whole-number "id"', {
					itemIndex,
					description: 'Every event in the event log needs its id; without it events cannot be told apart.',
				});
			}
		}
		return list as EventRecord[];
	}

	/**
	 * The most recent events matching the filter, newest first, at most `max`. Works
	 * whichever order the service lists in: newest first, the first pages hold them;
	 * oldest first, the end of the log is found by doubling the offset, then read.
	 */
	async recent(filter: EventFilter, max: number, pageSize = DEFAULT_PAGE_SIZE): Promise<EventRecord[]> {
		return (await this.tail(filter, max, pageSize)).events;
	}

	/** `recent`, plus the number of matching events when the service lists oldest first. */
	async tail(filter: EventFilter, max: number, pageSize = DEFAULT_PAGE_SIZE): Promise<{ events: EventRecord[]; oldestFirstLength?: number }> {
		const first = await this.page(filter, 0, pageSize);
		if (first.events.length === 0) return { events: [] };
		const order = orderOf(first.events);
		if (order !== 'oldest-first') {
			// Newest first (or a single event): read on from the top while more are wanted.
			const found = new Map<number, EventRecord>();
			let page = first;
			for (;;) {
				for (const event of page.events) if (found.size < max) found.set(event.id, event);
				if (found.size >= max || page.events.length === 0 || order === undefined) break;
				page = await this.page(filter, page.offset + page.events.length, pageSize);
				if (page.events.every((event) => found.has(event.id))) break;
			}
			return { events: newestFirst([...found.values()]).slice(0, max) };
		}
		const end = await this.endOffset(filter, first);
		const found = new Map<number, EventRecord>();
		for (let offset = Math.max(0, end - pageSize); found.size < max; offset = Math.max(0, offset - pageSize)) {
			const page = await this.page(filter, offset, pageSize);
			for (const event of page.events) found.set(event.id, event);
			if (offset === 0) break;
		}
		return { events: newestFirst([...found.values()]).slice(0, max), oldestFirstLength: end };
	}

	/**
	 * The number of events in an oldest-first log: offsets double until a page comes back
	 * empty, then halve between the last full and the first empty one. About 2·log2(n/page)
	 * requests instead of reading the whole log.
	 */
	async endOffset(filter: EventFilter, first: EventPage): Promise<number> {
		let known = first.events.length; // at least this many
		let step = Math.max(first.events.length, 1);
		let empty: number | undefined;
		while (empty === undefined) {
			const offset = known - 1 + step;
			const page = await this.page(filter, offset, 1);
			if (page.events.length === 0) empty = offset;
			else {
				known = offset + 1;
				step *= 2;
			}
		}
		// Events [0, known) exist; offset `empty` has none.
		let low = known;
		let high = empty;
		while (low < high) {
			const middle = Math.floor((low + high) / 2);
			const page = await this.page(filter, middle, 1);
			if (page.events.length === 0) high = middle;
			else low = middle + 1;
		}
		return low;
	}
}

export const DEFAULT_PAGE_SIZE = 100;

export type ListOrder = 'oldest-first' | 'newest-first';

/** The order a page shows, from its first two distinct ids; undefined when it cannot tell. */
export function orderOf(events: EventRecord[]): ListOrder | undefined {
	for (let i = 1; i < events.length; i++) {
		if (events[i].id !== events[0].id) return events[i].id > events[0].id ? 'oldest-first' : 'newest-first';
	}
	return undefined;
}

function newestFirst(events: EventRecord[]): EventRecord[] {
	return events.sort((a, b) => b.id - a.id);
}
