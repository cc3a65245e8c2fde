import type { INodeProperties } from 'n8n-workflow';

import * as getCustomFormResponse from './getCustomFormResponse.operation';
import * as update from './update.operation';

export const operations = { getCustomFormResponse, update };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['patient'] } },
		options: [
			{
				name: 'Get Custom Form Response',
				value: 'getCustomFormResponse',
				description: 'Get the answers a patient gave to the clinic\'s custom forms (one item per response)',
				action: 'Get the answers a patient gave to the clinic custom forms by patient ID such as 2048',
			},
			{
				name: 'Update',
				value: 'update',
				description: 'Change a patient\'s name, contact data, birth date, reminders or insurance data',
				action: 'Update a patient by patient ID such as 2048 changing only the fields given',
			},
		],
		default: 'update',
	},
	...getCustomFormResponse.description,
	...update.description,
];
