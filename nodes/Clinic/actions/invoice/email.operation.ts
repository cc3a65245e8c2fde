import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { readId, unwrap } from '../common';
import { recordOutputProperties, SHAPES } from '../../../shared/output';
import { recordItems } from '../output';
import { invoiceIdField } from './fields';

export const description = updateDisplayOptions({ show: { resource: ['invoice'], operation: ['email'] } }, [
	invoiceIdField('to e-mail to the patient; sign it first'),
	...recordOutputProperties(SHAPES.invoice),
]);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const id = readId(this, 'invoiceId', 'Invoice ID', itemIndex);
	const body = await client.request(
		{
			method: 'POST',
			path: `/invoices/${encodeURIComponent(id)}/email_invoice`,
			auth: 'integration',
			subject: `Invoice ${id}`,
		},
		itemIndex,
	);
	return recordItems(this, itemIndex, SHAPES.invoice, unwrap(this, body, 'invoice', itemIndex));
}
