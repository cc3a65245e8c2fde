import type { INodeProperties } from 'n8n-workflow';

import * as get from './get.operation';

export const operations = { get };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['consultation'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description: 'Get a consultation by ID, with its links to prescriptions, invoice and more',
				action: 'Get a consultation',
			},
		],
		default: 'get',
	},
	...get.description,
];
