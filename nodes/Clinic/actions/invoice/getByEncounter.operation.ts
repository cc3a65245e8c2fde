import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { readId, toItems, unwrap } from '../common';

const properties: INodeProperties[] = [
	{
		displayName: 'Encounter ID',
		name: 'encounterId',
		type: 'string',
		required: true,
		default: '',
		placeholder: '880',
		description:
			'Numeric ID of the encounter (visit). Obtain it from a consultation: the encounter_id that Consultation > Get returns, or the one in the value of a Clinic Trigger consultation-finished event.',
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['invoice'], operation: ['getByEncounter'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const id = readId(this, 'encounterId', 'Encounter ID', itemIndex);
	const body = await client.request(
		{
			method: 'GET',
			path: `/encounters/${encodeURIComponent(id)}/invoice`,
			auth: 'integration',
			subject: `The invoice of encounter ${id}`,
		},
		itemIndex,
	);
	return toItems(unwrap(this, body, 'invoice', itemIndex));
}
