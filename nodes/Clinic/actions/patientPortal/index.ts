import type { INodeProperties } from 'n8n-workflow';

import * as getPeople from './getPeople.operation';
import * as sendCode from './sendCode.operation';
import * as verifyCode from './verifyCode.operation';

export const operations = { getPeople, sendCode, verifyCode };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['patientPortal'] } },
		options: [
			{
				name: 'Get People',
				value: 'getPeople',
				description: 'Get the patients (people) the portal token may see, one item per person',
				action: 'Get the people of a portal account',
			},
			{
				name: 'Send Code',
				value: 'sendCode',
				description: 'Send a one-time verification code by SMS to a patient\'s phone',
				action: 'Send a portal code',
			},
			{
				name: 'Verify Code',
				value: 'verifyCode',
				description: 'Check the code the patient received and get a portal token',
				action: 'Verify a portal code',
			},
		],
		default: 'sendCode',
	},
	...getPeople.description,
	...sendCode.description,
	...verifyCode.description,
];
