import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { idLocator } from '../locators';
import { readId, toItems, unwrap } from '../common';

const properties: INodeProperties[] = [
	...idLocator({
		displayName: 'State ID',
		name: 'stateId',
		placeholder: '9',
		urlSegment: 'states',
		description:
			'The state (geography): numeric ID such as 9, e.g. the address_state_id of a patient as a Clinic Trigger patient event shows it',
	}),
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
