import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { idLocator } from '../locators';
import { readId, unwrap } from '../common';
import { SHAPES } from '../../../shared/output';
import { recordOutputProperties } from '../../../shared/outputProperties';
import { recordItems } from '../output';

const properties: INodeProperties[] = [
	...idLocator({
		displayName: 'Encounter ID',
		name: 'encounterId',
		placeholder: '880',
		urlSegment: 'encounters',
		description:
			'The encounter (visit): numeric ID such as 880, the encounter_id of a consultation (Consultation > Get, or a Clinic Trigger "Consultation Finished" event), or the encounter or invoice link of a consultation',
	}),
	...recordOutputProperties(SHAPES.invoice),
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
	return recordItems(this, itemIndex, SHAPES.invoice, unwrap(this, body, 'invoice', itemIndex));
}
