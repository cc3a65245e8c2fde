import type { INodeProperties } from 'n8n-workflow';

import * as getAll from './getAll.operation';

export const operations = { getAll };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['event'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'Get many events the webhook service emitted, with their delivery logs',
				action: 'Get many events',
			},
		],
		default: 'getAll',
	},
	...getAll.description,
];
