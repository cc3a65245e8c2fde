import type { INodeProperties } from 'n8n-workflow';

import * as getAll from './getAll.operation';

export const operations = { getAll };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['waitingRoom'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'Get many telehealth waiting rooms',
				action: 'Get many waiting rooms',
			},
		],
		default: 'getAll',
	},
	...getAll.description,
];
