/** An event as the webhook service's event log lists it, and how it is shown to users. */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, INode, JsonObject } from 'n8n-workflow';

import { fullTopic } from './catalog';
import type { CatalogEvent } from './catalog';
import { withoutSecret } from './webhookSubscriptions';

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

export function eventFilterOf(event: CatalogEvent, topicPrefix: string): EventFilter {
	return { topic: fullTopic(topicPrefix, event.suffix), name: event.name };
}

/** A trigger's output item for one logged event; `more` fields stand before its value. */
export function eventItemOf(event: EventRecord, more: IDataObject = {}): IDataObject {
	return { event: event.name, topic: event.topic, eventId: event.id, createdAt: event.created_at, ...more, value: event.value };
}

/** The delivery logs' shared secrets are taken out of an event before anyone sees it. */
export function redactEvent(event: IDataObject): IDataObject {
	if (!Array.isArray(event.logs)) return event;
	return { ...event, logs: event.logs.map((log) => (log && typeof log === 'object' ? withoutSecret(log as IDataObject) : log)) };
}

export type ListOrder = 'oldest-first' | 'newest-first';

/** The order a page shows, from its first two distinct ids; undefined when it cannot tell. */
export function orderOf(events: EventRecord[]): ListOrder | undefined {
	for (let i = 1; i < events.length; i++) {
		if (events[i].id !== events[0].id) return events[i].id > events[0].id ? 'oldest-first' : 'newest-first';
	}
	return undefined;
}

/** The events of a `GET /events` answer: an array, or an object holding it under "events"; each with a whole-number id. */
export function eventRecordsOf(node: INode, body: unknown, itemIndex: number): EventRecord[] {
	const list = Array.isArray(body) ? body : (body as { events?: unknown } | null | undefined)?.events;
	if (!Array.isArray(list)) {
		throw new NodeOperationError(node, 'The clinic service answered without a list of "events"', {
			itemIndex,
			description: 'Expected an array of events, or an object holding the array under "events".',
		});
	}
	if (!list.every((event) => Number.isInteger((event as JsonObject | null)?.id))) {
		throw new NodeOperationError(node, 'The clinic service listed an event without a whole-number "id"', {
			itemIndex,
			description: 'Every event in the event log needs its id; without it events cannot be told apart.',
		});
	}
	return list as EventRecord[];
}
