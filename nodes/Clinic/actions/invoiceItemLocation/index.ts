import type { INodeProperties } from 'n8n-workflow';

import * as getAll from './getAll.operation';

export const operations = { getAll };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['invoiceItemLocation'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'Get many invoice item locations',
				action: 'Get many invoice item locations',
			},
		],
		default: 'getAll',
	},
	...getAll.description,
];
