import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as del from './delete.operation';
import * as getAll from './getAll.operation';

export const operations = { create, delete: del, getAll };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['webhookSubscription'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description: 'Subscribe a callback URL to one event of the service',
				action: 'Create a webhook subscription that sends one kind of event to a callback URL',
			},
			{
				name: 'Delete',
				value: 'delete',
				description: 'Unsubscribe: delete a webhook subscription by ID',
				action: 'Delete a webhook subscription by ID such as 17 so the service stops sending its events',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'Get many webhook subscriptions',
				action: 'Get many webhook subscriptions with the ID and callback URL and event of each',
			},
		],
		default: 'getAll',
	},
	...create.description,
	...del.description,
	...getAll.description,
];
