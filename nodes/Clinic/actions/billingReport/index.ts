import type { INodeProperties } from 'n8n-workflow';

import * as get from './get.operation';

export const operations = { get };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['billingReport'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description: 'Get the billing report of charges and invoices between two dates, per encounter',
				action: 'Get a billing report',
			},
		],
		default: 'get',
	},
	...get.description,
];
