/**
 * A verified delivery's run (Duplicate Check: Event Log): the events past the trigger's
 * cursor (newEvents.ts), each an item with its `eventId`, `createdAt` and the log's `value`.
 * n8n answers when it starts the run (on 2.x once it stored it, and only then saves the
 * cursor); a delivery that finds nothing new is answered here, and starts nothing.
 */
import type { IDataObject, INodeExecutionData, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { findEvent, fullTopic } from '../shared/catalog';
import { cursorFromNow, isCursor } from '../shared/eventCursor';
import type { Cursor } from '../shared/eventCursor';
import { EventLog } from '../shared/eventLog';
import type { EventFilter, EventRecord } from '../shared/eventRecord';
import { shapeTriggerItems } from '../shared/output';
import type { ClinicClient } from '../shared/transport';
import { readNewEvents } from './newEvents';
import type { StoredSubscription } from './storage';

/** A delivery is answered within this, whatever the log does: the service's wait is short. */
export const EVENT_LOG_ANSWER_MS = 5000;
/** The answer to a delivery that finds nothing new (a copy, a re-send): a 200, so the service stops retrying. */
export const NOTHING_NEW_ANSWER = { received: true, duplicate: true };
/** A trigger activated before cursors existed starts from now, but runs what was logged this long before. */
export const UPDATE_CATCH_UP_MS = 60_000;
/** The Start From setting of the trigger's cursor (the Event Log Trigger's "now"). */
const START = 'now';

export interface TriggerDelivery {
	trigger: string;
	client: ClinicClient;
	stored: Map<string, StoredSubscription>;
	/** When webhook() was called. */
	arrived: number;
}

/** The log's filters for the trigger's selected events: their topics as subscribed, else from the credential. */
export async function triggerFilters(selected: unknown, stored: Map<string, StoredSubscription>, client: ClinicClient): Promise<EventFilter[]> {
	const keys = Array.isArray(selected) ? selected.map(String) : [];
	let prefix: string | undefined;
	const filters: EventFilter[] = [];
	for (const key of keys) {
		const event = findEvent(key);
		if (!event) continue;
		const topic = stored.get(key)?.topic || fullTopic((prefix ??= (await client.integrationSettings()).topicPrefix), event.suffix);
		filters.push({ topic, name: event.name });
	}
	return filters;
}

/** The trigger's cursor from now; reading the log failing says what to do. */
export async function startingCursor(log: EventLog, filters: EventFilter[], keepFrom?: Date): Promise<Cursor> {
	return await cursorFromNow(log, filters, START, keepFrom);
}

export async function runNewEvents(ctx: IWebhookFunctions, delivery: TriggerDelivery): Promise<IWebhookResponseData> {
	const node = ctx.getNode();
	const log = new EventLog(ctx, delivery.client);
	const staticData = ctx.getWorkflowStaticData('node');
	let found;
	try {
		const filters = await triggerFilters(ctx.getNodeParameter('events', []), delivery.stored, delivery.client);
		// Activated by a version without cursors: from now, with what was logged just before (this delivery's event).
		const saved = isCursor(staticData.cursor) ? staticData.cursor : await startingCursor(log, filters, new Date(Date.now() - UPDATE_CATCH_UP_MS));
		const left = Math.max(0, EVENT_LOG_ANSWER_MS - (performance.now() - delivery.arrived));
		found = await readNewEvents(delivery.trigger, log, filters, saved, left);
	} catch (error) {
		const reason = (error as Error).message;
		ctx.logger.warn(`Clinic Trigger "${node.name}": the event log could not be read (${reason}); nothing ran, the service's retry or the next delivery runs its events`);
		ctx.getResponseObject().status(503).set('Retry-After', '5').json({ error: 'The event log could not be read: try again' });
		return { noWebhookResponse: true };
	}
	if (found.events.length === 0) {
		ctx.getResponseObject().status(200).json(NOTHING_NEW_ANSWER);
		return { noWebhookResponse: true };
	}
	staticData.cursor = found.cursor;
	const receivedAt = new Date().toISOString();
	const items = found.events.map((event) => itemOf(event, receivedAt));
	return { workflowData: [shapeTriggerItems(ctx, items)] };
}

function itemOf(event: EventRecord, receivedAt: string): INodeExecutionData {
	const json: IDataObject = { event: event.name, topic: event.topic, eventId: event.id, createdAt: event.created_at, receivedAt, value: event.value };
	return { json };
}
