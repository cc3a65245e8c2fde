import { updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { idLocator } from '../locators';
import { checkOptionalId, readId, toItems, unwrap } from '../common';
import { isSet } from '../shared';

const properties: INodeProperties[] = [
	...idLocator({
		displayName: 'Consultation ID',
		name: 'consultationId',
		placeholder: '1024',
		urlSegment: 'consultations',
		description:
			'The consultation that prescribes the drug: its numeric ID (e.g. 1024, the id in the value of a Clinic Trigger "Consultation Created" event), or a link to it',
	}),
	{
		displayName: 'Prescription Drug ID',
		name: 'prescriptionDrugId',
		type: 'string',
		required: true,
		default: '',
		placeholder: '310',
		description: 'Numeric ID of the drug in the clinic\'s prescription drug catalog',
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		options: [
			{
				displayName: 'Account ID',
				name: 'account_id',
				type: 'string',
				default: '',
				description: 'Numeric ID of the prescribing account (physician). The service uses the consultation\'s account when omitted.',
			},
			{
				displayName: 'Dose',
				name: 'dose',
				type: 'string',
				default: '',
				placeholder: '1 tablet',
				description: 'How much to take each time',
			},
			{
				displayName: 'Duration',
				name: 'duration',
				type: 'string',
				default: '',
				placeholder: '7 days',
				description: 'For how long to take it',
			},
			{
				displayName: 'Frequency',
				name: 'frequency',
				type: 'string',
				default: '',
				placeholder: 'every 8 hours',
				description: 'How often to take it',
			},
			{
				displayName: 'Prescription ID',
				name: 'prescription_id',
				type: 'string',
				default: '',
				description: 'Numeric ID of the prescription (from the consultation\'s prescriptions link) to add the drug to',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['prescriptionDrug'], operation: ['addToConsultation'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const consultationId = readId(this, 'consultationId', 'Consultation ID', itemIndex);
	const prescriptionDrugId = readId(this, 'prescriptionDrugId', 'Prescription Drug ID', itemIndex);
	const fields = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;

	// The service shows every field as a string.
	const drug: IDataObject = { consultation_id: consultationId, prescription_drug_id: prescriptionDrugId };
	for (const name of ['dose', 'frequency', 'duration'] as const) {
		if (isSet(fields[name])) drug[name] = String(fields[name]);
	}
	const prescriptionId = checkOptionalId(this, fields.prescription_id, 'Prescription ID', itemIndex);
	if (prescriptionId) drug.prescription_id = prescriptionId;
	const accountId = checkOptionalId(this, fields.account_id, 'Account ID', itemIndex);
	if (accountId) drug.account_id = accountId;

	const body = await client.request(
		{
			method: 'POST',
			path: '/consultation_prescription_drugs',
			body: { consultation_prescription_drug: drug },
			auth: 'integration',
			subject: `Consultation ${consultationId}`,
		},
		itemIndex,
	);
	return toItems(unwrap(this, body ?? {}, 'consultation_prescription_drug', itemIndex));
}
