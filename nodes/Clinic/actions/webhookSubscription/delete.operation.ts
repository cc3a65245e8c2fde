import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { WebhookSubscriptions } from '../../../shared/webhookSubscriptions';
import { idLocator } from '../locators';
import { readId } from '../common';
import { apiFailure, isHttpStatus, settle } from '../shared';

const properties: INodeProperties[] = [
	...idLocator({
		displayName: 'Subscription',
		name: 'subscriptionId',
		placeholder: '17',
		searchList: 'searchSubscriptions',
		description: 'The webhook subscription to delete: pick it from the list, or give its numeric ID such as 17 (the id that Webhook Subscription > Get Many returns)',
	}),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['webhookSubscription'], operation: ['delete'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const id = readId(this, 'subscriptionId', 'Subscription ID', itemIndex);
	const outcome = await settle(new WebhookSubscriptions(client, () => this.getNode()).remove(id, itemIndex));
	if (!outcome.ok) {
		if (isHttpStatus(outcome.error, 404)) {
			throw apiFailure(this, {
				message: `Webhook subscription ${id} does not exist or was already deleted`,
				description: 'Use Webhook Subscription > Get Many to see the subscriptions of this account.',
				httpCode: '404',
				itemIndex,
			});
		}
		throw outcome.error;
	}
	return [{ json: { deleted: true, id: Number(id) } }];
}
