import type { INodeProperties } from 'n8n-workflow';

import * as get from './get.operation';

export const operations = { get };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['state'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description: 'Get a state (geography) by ID, with its name and abbreviation',
				action: 'Get a state',
			},
		],
		default: 'get',
	},
	...get.description,
];
