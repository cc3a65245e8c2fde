/**
 * A verified delivery's run (Duplicate Check: Event Log): the events past the trigger's
 * cursor (newEvents.ts), each an item with its `eventId`, `createdAt` and the log's `value`.
 * n8n answers when it starts the run (on 2.x once it stored it, and only then saves the
 * cursor); a delivery that finds nothing new is answered here, and starts nothing.
 */
import { sleep } from 'n8n-workflow';
import type { IDataObject, INodeExecutionData, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { findEvent, fullTopic } from '../shared/catalog';
import { cursorFromNow, isCursor } from '../shared/eventCursor';
import type { Cursor } from '../shared/eventCursor';
import { EventLog } from '../shared/eventLog';
import type { EventFilter, EventRecord } from '../shared/eventRecord';
import { shapeTriggerItems } from '../shared/output';
import type { ClinicClient } from '../shared/transport';
import { pathOf } from '../shared/urls';
import { ANSWER_WAIT_MS } from './memory';
import type { NewEvents } from './memory';
import { readNewEvents } from './newEvents';
import type { StoredSubscription } from './storage';

/** The answer to a delivery that finds nothing new (a copy, a re-send): a 200, so the service stops retrying. */
export const NOTHING_NEW_ANSWER = { received: true, duplicate: true };
/** A trigger activated before cursors existed starts from now, but runs what was logged this long before. */
export const UPDATE_CATCH_UP_MS = 60_000;
/** The Start From setting of the trigger's cursor (the Event Log Trigger's "now"). */
const START = 'now';

export interface TriggerDelivery {
	/** The trigger and n8n's mode: test listening keeps its own cursor (in n8n's memory), and its reads are not production's. */
	trigger: string;
	client: ClinicClient;
	stored: Map<string, StoredSubscription>;
	/** When webhook() was called (Date.now()). */
	arrived: number;
}

/** Whether the trigger runs the log's events (Duplicate Check Event Log), not each delivery's body. */
export function readsEventLog(options: IDataObject): boolean {
	return options.duplicateCheck !== 'off' && options.duplicateCheck !== 'sameBody';
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

/** The trigger's cursor from now: where activation starts it. */
export async function startingCursor(log: EventLog, filters: EventFilter[]): Promise<Cursor> {
	return await cursorFromNow(log, filters, START);
}

/**
 * For a trigger activated by a version without cursors: from now, but for what was logged
 * in the minute before (this delivery's event among it) and did not run here yet, as the
 * service's delivery log shows (no 2xx answer at this trigger's address).
 */
async function cursorAfterUpdate(ctx: IWebhookFunctions, log: EventLog, filters: EventFilter[]): Promise<Cursor> {
	const ownPath = pathOf(ctx.getNodeWebhookUrl('default') ?? '');
	const since = Date.now() - UPDATE_CATCH_UP_MS;
	const ranHere = (event: EventRecord) =>
		(event.logs ?? []).some((entry) => pathOf(String(entry.target_url ?? '')) === ownPath && typeof entry.response_code === 'number' && entry.response_code >= 200 && entry.response_code < 300);
	return await cursorFromNow(log, filters, START, (event) => !(Date.parse(event.created_at) >= since) || ranHere(event));
}

export async function runNewEvents(ctx: IWebhookFunctions, delivery: TriggerDelivery): Promise<IWebhookResponseData> {
	const node = ctx.getNode();
	const log = new EventLog(ctx, delivery.client);
	const staticData = ctx.getWorkflowStaticData('node');
	let found;
	try {
		const filters = await triggerFilters(ctx.getNodeParameter('events', []), delivery.stored, delivery.client);
		// Activated by a version without cursors: from now, with what was logged just before (this delivery's event).
		const saved = isCursor(staticData.cursor) ? staticData.cursor : await cursorAfterUpdate(ctx, log, filters);
		found = await readNewEvents(delivery.trigger, log, filters, saved, delivery.arrived);
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
	keepCursorMarked(ctx, staticData, found);
	const receivedAt = new Date().toISOString();
	const items = found.events.map((event) => itemOf(event, receivedAt));
	return { workflowData: [shapeTriggerItems(ctx, items)] };
}

/**
 * Sets the run's cursor in the static data, and sets it again until n8n has answered. n8n
 * 2.41 saves what webhook() changed once it stored the run (webhook-helpers.ts, the deferred
 * `onReceived` answer), but on the way `WorkflowRunner.run` wraps the same static data again
 * (workflow-runner.ts, `establishContextForPersistence`), which clears its changed mark:
 * set again after that, the cursor is saved with the run, and not when n8n refused it.
 * n8n 1.x saves it as it answers, before the run.
 */
function keepCursorMarked(ctx: IWebhookFunctions, staticData: IDataObject, found: NewEvents): void {
	staticData.cursor = found.cursor;
	const response = ctx.getResponseObject();
	let answered = false;
	const onAnswered = () => {
		answered = true;
		// A connection closed before any answer went out: n8n stored nothing for it.
		found.answered?.(response.writableFinished ? response.statusCode : 0);
	};
	response.once('finish', onAnswered);
	response.once('close', onAnswered);
	void (async () => {
		for (const started = Date.now(); !answered && Date.now() - started < ANSWER_WAIT_MS; ) {
			await sleep(1);
			if (!answered) staticData.cursor = found.cursor;
		}
	})();
}

function itemOf(event: EventRecord, receivedAt: string): INodeExecutionData {
	const json: IDataObject = { event: event.name, topic: event.topic, eventId: event.id, createdAt: event.created_at, receivedAt, value: event.value };
	return { json };
}
