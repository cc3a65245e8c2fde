import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { idLocator } from '../locators';
import { simplifyConsultation, simplifyProperties } from '../simplify';
import { SHAPES } from '../../../shared/output';
import { recordOutputProperties } from '../../../shared/outputProperties';
import { recordItems } from '../output';
import { readId, unwrap } from '../common';

const properties: INodeProperties[] = [
	...idLocator({
		displayName: 'Consultation ID',
		name: 'consultationId',
		placeholder: '1024',
		urlSegment: 'consultations',
		description:
			'The consultation: its numeric ID (e.g. 1024, the id in the value of a Clinic Trigger "Consultation Finished" event), or a link to it such as the consultation link of an invoice',
	}),
	...simplifyProperties('the 19 links and empty fields go; the patient\'s id stays as person_id'),
	...recordOutputProperties(SHAPES.consultation),
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
	const consultation = unwrap(this, body, 'consultation', itemIndex);
	return recordItems(this, itemIndex, SHAPES.consultation, consultation, (record) =>
		this.getNodeParameter('simplify', itemIndex, false) ? simplifyConsultation(record) : record,
	);
}
