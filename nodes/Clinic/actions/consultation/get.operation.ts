import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { readId, toItems, unwrap } from '../common';

const properties: INodeProperties[] = [
	{
		displayName: 'Consultation ID',
		name: 'consultationId',
		type: 'string',
		required: true,
		default: '',
		placeholder: '1024',
		description:
			'Numeric ID of the consultation, e.g. the ID in the value of a Clinic Trigger "consultation-finished" event',
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['consultation'], operation: ['get'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const id = readId(this, 'consultationId', 'Consultation ID', itemIndex);
	const body = await client.request(
		{ method: 'GET', path: `/consultations/${encodeURIComponent(id)}`, auth: 'integration', subject: `Consultation ${id}` },
		itemIndex,
	);
	return toItems(unwrap(this, body, 'consultation', itemIndex));
}
