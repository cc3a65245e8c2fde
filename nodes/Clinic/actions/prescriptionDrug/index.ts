import type { INodeProperties } from 'n8n-workflow';

import * as addToConsultation from './addToConsultation.operation';

export const operations = { addToConsultation };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['prescriptionDrug'] } },
		options: [
			{
				name: 'Add to Consultation',
				value: 'addToConsultation',
				description: 'Prescribe a drug in a consultation, with dose, frequency and duration',
				action: 'Prescribe a drug in a consultation',
			},
		],
		default: 'addToConsultation',
	},
	...addToConsultation.description,
];
