import { updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { idLocator } from '../locators';
import { readId } from '../common';
import { SHAPES } from '../../../shared/output';
import { recordOutputProperties } from '../../../shared/outputProperties';
import { recordItems } from '../output';

const properties: INodeProperties[] = [
	...idLocator({
		displayName: 'Patient ID',
		name: 'patientId',
		placeholder: '2048',
		urlSegment: 'people',
		description:
			"The patient (a person in the service): numeric ID such as 2048 (the id in the value of a Clinic Trigger \"Patient Created\" event), or a link to the person such as a consultation's person link",
	}),
	...recordOutputProperties(SHAPES.customFormResponse),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['patient'], operation: ['getCustomFormResponse'] } },
	properties,
);

/**
 * The service does not document this answer's shape. A bare array, or an object whose
 * list sits under `custom_form_responses` (or is its only field), gives one item per
 * response; `{custom_form_response: {...}}` and any other object give one item.
 */
function responsesOf(body: unknown): unknown {
	if (Array.isArray(body) || !body || typeof body !== 'object') return body ?? {};
	const record = body as IDataObject;
	for (const key of ['custom_form_responses', 'custom_form_response']) {
		if (key in record) return record[key];
	}
	const keys = Object.keys(record);
	if (keys.length === 1 && Array.isArray(record[keys[0]])) return record[keys[0]];
	return record;
}

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const id = readId(this, 'patientId', 'Patient ID', itemIndex);
	const body = await client.request(
		{
			method: 'GET',
			path: `/people/${encodeURIComponent(id)}/custom_form_response`,
			auth: 'integration',
			subject: `Patient ${id}`,
		},
		itemIndex,
	);
	return recordItems(this, itemIndex, SHAPES.customFormResponse, responsesOf(body));
}
