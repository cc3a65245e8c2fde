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
				action: 'Create a webhook subscription',
			},
			{
				name: 'Delete',
				value: 'delete',
				description: 'Unsubscribe: delete a webhook subscription by ID',
				action: 'Delete a webhook subscription',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'Get many webhook subscriptions',
				action: 'Get many webhook subscriptions',
			},
		],
		default: 'getAll',
	},
	...create.description,
	...del.description,
	...getAll.description,
];
