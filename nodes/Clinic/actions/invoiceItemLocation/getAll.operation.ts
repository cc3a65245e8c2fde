import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { limitRecords, returnAllOrLimit, toItems } from '../common';
import { recordsOf } from '../shared';

export const description = updateDisplayOptions(
	{ show: { resource: ['invoiceItemLocation'], operation: ['getAll'] } },
	returnAllOrLimit,
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const body = await client.request(
		{ method: 'GET', path: '/invoice_item_locations', auth: 'integration', subject: 'The invoice item locations' },
		itemIndex,
	);
	const records = recordsOf(this, body, 'invoice_item_locations', itemIndex);
	return toItems(limitRecords(this, records, itemIndex));
}
