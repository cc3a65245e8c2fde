import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { readId, unwrap } from '../common';
import { readOutputChoice, SHAPES } from '../../../shared/output';
import { recordOutputProperties } from '../../../shared/outputProperties';
import { recordItems } from '../output';
import { invoiceIdField } from './fields';

export const description = updateDisplayOptions({ show: { resource: ['invoice'], operation: ['email'] } }, [
	...invoiceIdField('to e-mail to the patient; sign it first'),
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
	const items = recordItems(this, itemIndex, SHAPES.invoice, unwrap(this, body, 'invoice', itemIndex));
	// The service answers the invoice alone. Version 1.1 says what happened, for the next step
	// ({{ $json.email_sent }}); Raw keeps the service's answer as it came, version 1 as it was.
	const choice = readOutputChoice(this, itemIndex);
	if (!choice || choice.mode === 'raw') return items;
	return items.map((item) => ({ ...item, json: { email_sent: true, ...item.json } }));
}
