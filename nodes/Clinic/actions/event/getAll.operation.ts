import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { findTopic, fullTopic } from '../../../shared/catalog';
import type { ClinicClient } from '../../../shared/transport';
import type { EventFilter } from '../../../shared/eventRecord';
import { DEFAULT_PAGE_SIZE, EventLog } from '../../../shared/eventLog';
import { redactEvent } from '../../../shared/eventRecord';
import { returnAllOrLimit } from '../common';
import { simplifyEvent, simplifyProperties } from '../simplify';
import { eventOutputProperties } from '../../../shared/outputProperties';
import { eventRecord } from '../output';
import { requireTopicPrefix } from '../shared';
import { eventNameOptions, topicOptions } from '../../../shared/catalogOptions';

const properties: INodeProperties[] = [
	...returnAllOrLimit,
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		options: [
			{
				displayName: 'Event Name',
				name: 'name',
				type: 'options',
				default: 'consultation-finished',
				options: eventNameOptions,
				description: 'Only events with this name, e.g. consultation-finished',
			},
			{
				displayName: 'Topic',
				name: 'topic',
				type: 'options',
				default: 'consultation',
				options: topicOptions,
				description: 'Only events of this topic. The credential\'s Topic Prefix is put in front, e.g. clinic-38729.consultation.',
			},
		],
	},
	{
		displayName: 'Page Size',
		name: 'pageSize',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: DEFAULT_PAGE_SIZE,
		description: 'How many events to ask the service for per request. The node keeps asking until it has them all or reaches the limit.',
	},
	...simplifyProperties('the delivery logs go; their count and the last response code stay'),
	...eventOutputProperties(),
];

export const description = updateDisplayOptions({ show: { resource: ['event'], operation: ['getAll'] } }, properties);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const limit = returnAll ? Infinity : (this.getNodeParameter('limit', itemIndex, 50) as number);
	const pageSize = Math.floor(Number(this.getNodeParameter('pageSize', itemIndex, DEFAULT_PAGE_SIZE)));
	if (!Number.isFinite(pageSize) || pageSize < 1) {
		throw new NodeOperationError(this.getNode(), `Page Size must be a whole number of at least 1 in item ${itemIndex + 1}`, {
			itemIndex,
		});
	}
	const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	const legacy = (event: IDataObject) =>
		this.getNodeParameter('simplify', itemIndex, false) ? simplifyEvent(event) : event;

	const query: EventFilter = {};
	if (filters.topic) {
		const suffix = String(filters.topic);
		if (!findTopic(suffix)) {
			throw new NodeOperationError(this.getNode(), `Topic "${suffix}" is not one the service emits (item ${itemIndex + 1})`, {
				itemIndex,
			});
		}
		query.topic = fullTopic(await requireTopicPrefix(this, client, itemIndex), suffix);
	}
	if (filters.name) query.name = String(filters.name);

	const log = new EventLog(this.getNode(), client);
	const output: INodeExecutionData[] = [];
	let offset = 0;
	while (output.length < limit) {
		const wanted = Math.min(pageSize, limit - output.length);
		const page = await log.page(query, offset, wanted, itemIndex);
		for (const event of page.events.slice(0, limit - output.length)) {
			const redacted = redactEvent(event);
			output.push({ json: eventRecord(this, itemIndex, redacted, simplifyEvent, legacy) });
		}
		if (page.last) break;
		offset += page.events.length;
	}
	return output;
}
