import { updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { findEvent } from '../../../shared/catalog';
import type { ClinicClient } from '../../../shared/transport';
import { limitRecords, returnAllOrLimit, toItems } from '../common';
import { WebhookSubscriptions, isLive, withoutSecret } from '../../../shared/webhookSubscriptions';
import { eventOptions } from '../../../shared/catalogOptions';

const properties: INodeProperties[] = [
	...returnAllOrLimit,
	{
		displayName: 'Only Live',
		name: 'onlyLive',
		type: 'boolean',
		default: true,
		description: 'Whether to return only enabled subscriptions that were not deleted',
	},
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		options: [
			{
				displayName: 'Event',
				name: 'event',
				type: 'options',
				default: 'consultation:consultation-finished',
				options: eventOptions,
				description: 'Only subscriptions to this event (its topic suffix and event name)',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['webhookSubscription'], operation: ['getAll'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const onlyLive = this.getNodeParameter('onlyLive', itemIndex, true) as boolean;
	const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	const event = filters.event ? findEvent(String(filters.event)) : undefined;

	const listed = await new WebhookSubscriptions(client, () => this.getNode()).list(itemIndex);
	const subscriptions = listed.filter((subscription) => {
		if (onlyLive && !isLive(subscription)) return false;
		if (filters.event && !event) return false;
		if (event) {
			const topic = String(subscription.event_topic ?? '');
			if (subscription.event_name !== event.name) return false;
			if (topic !== event.suffix && !topic.endsWith(`.${event.suffix}`)) return false;
		}
		return true;
	});
	return toItems(limitRecords(this, subscriptions, itemIndex).map(withoutSecret));
}
