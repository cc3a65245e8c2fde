import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';
import type {
	IDataObject,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';

import { integrationCredentials } from '../shared/authentication';
import { describeTopicPrefixProblem, findEvent } from '../shared/catalog';
import { eventsSubtitle } from '../shared/catalogOptions';
import { clientFor } from '../shared/transport';
import type { ClinicClient } from '../shared/transport';
import type { EventFilter, EventRecord } from '../shared/eventRecord';
import { EventLog } from '../shared/eventLog';
import { eventFilterOf, eventItemOf, redactEvent } from '../shared/eventRecord';
import { shapeTriggerItems } from '../shared/output';
import { eventOutputProperties } from '../shared/outputProperties';
import { timeoutMsOf } from '../shared/timeoutOption';
import { cursorFromDate, cursorFromId, cursorFromNow, poll, savedCursor } from '../shared/eventCursor';
import type { Cursor } from '../shared/eventCursor';
import { DEFAULT_MAX_EVENTS_PER_POLL, MAX_EVENTS_PER_POLL_LIMIT, eventLogTriggerProperties } from './description';

export class ClinicEventLogTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Clinic Event Log Trigger',
		name: 'clinicEventLogTrigger',
		icon: { light: 'file:clinic.svg', dark: 'file:clinic.dark.svg' },
		group: ['trigger'],
		// 1.1: the Output choice (Simplified by default); saved version 1 nodes output as before.
		version: [1, 1.1],
		defaultVersion: 1.1,
		subtitle: eventsSubtitle('events'),
		description:
			"Starts the workflow for each new event in the clinic service's event log, checked on a schedule: works without a public address and catches up after downtime",
		defaults: { name: 'Clinic Event Log Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: integrationCredentials,
		properties: [...eventLogTriggerProperties, ...eventOutputProperties()],
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const node = this.getNode();
		const options = this.getNodeParameter('options', {}) as IDataObject;
		const client = clientFor(this, { timeoutMs: timeoutMsOf(options), operation: 'Clinic Event Log Trigger' });
		const log = new EventLog(node, client);
		const filters = await filtersOf(this, client);
		const withLogs = options.includeDeliveryLogs === true;

		if (this.getMode() === 'manual') {
			// "Fetch Test Event": the latest matching event; the cursor is left alone.
			const latest: EventRecord[] = [];
			for (const filter of filters) latest.push(...(await log.tail(filter, 1)).events);
			latest.sort((a, b) => b.id - a.id);
			if (latest.length === 0) {
				throw new NodeOperationError(node, 'No event of the chosen kinds is in the event log yet', {
					description:
						'Make one happen in the clinic app (for example finish a consultation), then fetch again. An active workflow waits for new events by itself.',
				});
			}
			return [shapeTriggerItems(this, [itemOf(latest[0], withLogs)])];
		}

		const max = maxEventsOf(this, options);
		const start = startOf(this);
		const staticData = this.getWorkflowStaticData('node');
		const saved = savedCursor(staticData);
		let cursor: Cursor;
		if (saved && saved.start === start.key) {
			cursor = saved;
		} else {
			cursor =
				start.kind === 'now'
					? await cursorFromNow(log, filters, start.key)
					: start.kind === 'date'
						? cursorFromDate(start.date, start.key)
						: cursorFromId(start.id, start.key);
			if (start.kind === 'now') {
				// Nothing before activation is emitted; the cursor is saved with the activation.
				staticData.cursor = cursor;
				return null;
			}
		}

		const outcome = await poll(log, filters, cursor, max);
		// n8n saves the static data with the execution it starts (or after an empty poll, where it saves at all).
		staticData.cursor = outcome.cursor;
		if (outcome.events.length === 0) return null;
		return [shapeTriggerItems(this, outcome.events.map((event) => itemOf(event, withLogs)))];
	}
}

/** One output item: the same fields as the Clinic Trigger's, plus the event's id and time. */
function itemOf(event: EventRecord, withLogs: boolean): INodeExecutionData {
	const json = eventItemOf(event);
	if (withLogs) json.logs = (redactEvent(event).logs as IDataObject[] | undefined) ?? [];
	return { json };
}

async function filtersOf(ctx: IPollFunctions, client: ClinicClient): Promise<EventFilter[]> {
	const node = ctx.getNode();
	const keys = ctx.getNodeParameter('events', []) as string[];
	if (!Array.isArray(keys) || keys.length === 0) {
		throw new NodeOperationError(node, 'Choose at least one event in "Events"');
	}
	const prefix = (await client.integrationSettings()).topicPrefix;
	const problem = describeTopicPrefixProblem(prefix);
	if (problem) throw new NodeOperationError(node, problem);
	const filters = new Map<string, EventFilter>();
	for (const key of keys) {
		const event = findEvent(key);
		if (!event) {
			throw new NodeOperationError(node, `"${key}" in "Events" is not an event the service emits`, {
				description: 'Pick the events from the list again.',
			});
		}
		filters.set(key, eventFilterOf(event, prefix));
	}
	return [...filters.values()];
}

function maxEventsOf(ctx: IPollFunctions, options: IDataObject): number {
	const raw = options.maxEventsPerPoll ?? DEFAULT_MAX_EVENTS_PER_POLL;
	const max = Number(raw);
	if (!Number.isInteger(max) || max < 1 || max > MAX_EVENTS_PER_POLL_LIMIT) {
		throw new NodeOperationError(
			ctx.getNode(),
			`"Max Events Per Poll" must be a whole number from 1 to ${MAX_EVENTS_PER_POLL_LIMIT}, not ${String(raw)}`,
		);
	}
	return max;
}

type Start =
	| { kind: 'now'; key: string }
	| { kind: 'date'; key: string; date: Date }
	| { kind: 'eventId'; key: string; id: number };

function startOf(ctx: IPollFunctions): Start {
	const node = ctx.getNode();
	const startFrom = ctx.getNodeParameter('startFrom', 'now') as string;
	if (startFrom === 'date') {
		const raw = ctx.getNodeParameter('startDate', '') as unknown;
		const date = new Date(raw instanceof Date ? raw.getTime() : String(raw ?? ''));
		if (raw === '' || Number.isNaN(date.getTime())) {
			throw new NodeOperationError(node, `"Start Date" must be a date, e.g. 2026-01-31T08:00:00Z, not "${String(raw)}"`);
		}
		return { kind: 'date', key: `date:${date.toISOString()}`, date };
	}
	if (startFrom === 'eventId') {
		const raw = ctx.getNodeParameter('startEventId', 1) as unknown;
		const id = Number(raw);
		if (!Number.isInteger(id) || id < 1) {
			throw new NodeOperationError(node, `"Start Event ID" must be a whole number of at least 1, not "${String(raw)}"`);
		}
		return { kind: 'eventId', key: `id:${id}`, id };
	}
	return { kind: 'now', key: 'now' };
}
