import type { INodeProperties } from 'n8n-workflow';

import * as addToInvoice from './addToInvoice.operation';

export const operations = { addToInvoice };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['charge'] } },
		options: [
			{
				name: 'Add to Invoice',
				value: 'addToInvoice',
				description: 'Add a charge (invoice item) with quantity and unit value to an unsigned invoice',
				action: 'Add a charge to an invoice',
			},
		],
		default: 'addToInvoice',
	},
	...addToInvoice.description,
];
