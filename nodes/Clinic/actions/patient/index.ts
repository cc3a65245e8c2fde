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
				action: 'Get form responses of a patient',
			},
			{
				name: 'Update',
				value: 'update',
				description: 'Change a patient\'s name, contact data, birth date, reminders or insurance data',
				action: 'Update a patient',
			},
		],
		default: 'update',
	},
	...getCustomFormResponse.description,
	...update.description,
];
