import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { limitRecords, returnAllOrLimit, toItems } from '../common';
import { recordsOf } from '../shared';

export const description = updateDisplayOptions(
	{ show: { resource: ['waitingRoom'], operation: ['getAll'] } },
	returnAllOrLimit,
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	// Public: the service lists waiting rooms without authentication.
	const body = await client.request(
		{ method: 'GET', path: '/waiting_rooms', auth: 'none', subject: 'The waiting rooms' },
		itemIndex,
	);
	const records = recordsOf(this, body, 'waiting_rooms', itemIndex);
	return toItems(limitRecords(this, records, itemIndex));
}
