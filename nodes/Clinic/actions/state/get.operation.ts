import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { readId, toItems, unwrap } from '../common';

const properties: INodeProperties[] = [
	{
		displayName: 'State ID',
		name: 'stateId',
		type: 'string',
		required: true,
		default: '',
		placeholder: '9',
		description:
			'Numeric ID of the state (geography), e.g. the address_state_id of a patient, as a Clinic Trigger patient event shows it',
	},
];

export const description = updateDisplayOptions({ show: { resource: ['state'], operation: ['get'] } }, properties);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const id = readId(this, 'stateId', 'State ID', itemIndex);
	// Public: state lookups need no authentication. An unknown id answers 404, which names the state.
	const body = await client.request(
		{ method: 'GET', path: `/states/${encodeURIComponent(id)}`, auth: 'none', subject: `State ${id}` },
		itemIndex,
	);
	return toItems(unwrap(this, body, 'state', itemIndex));
}
