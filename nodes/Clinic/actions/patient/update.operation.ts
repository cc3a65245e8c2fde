import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { idLocator } from '../locators';
import { checkEmail, checkOptionalId, readId, toDate, unwrap } from '../common';
import { SHAPES } from '../../../shared/output';
import { recordOutputProperties } from '../../../shared/outputProperties';
import { recordItems } from '../output';
import { isSet } from '../shared';

type Kind = 'string' | 'date' | 'boolean';

interface AttributeField {
	/** The service's name inside `person.person_attributes`. */
	name: string;
	displayName: string;
	kind: Kind;
	description: string;
}

/** Every `person_attributes` field of the service: reminders and the insurance data. */
const ATTRIBUTE_FIELDS: AttributeField[] = [
	{ name: 'send_reminders', displayName: 'Send Reminders', kind: 'boolean', description: 'Whether the patient receives appointment reminders' },
	{ name: 'insurance_name', displayName: 'Insurance Name', kind: 'string', description: 'Name of the insurance company' },
	{ name: 'insurance_file', displayName: 'Insurance File', kind: 'string', description: 'File (expediente) of the patient at the insurer' },
	{ name: 'insurance_number', displayName: 'Insurance Number', kind: 'string', description: 'Policy or membership number' },
	{ name: 'insurance_plan', displayName: 'Insurance Plan', kind: 'string', description: 'Plan of the policy' },
	{ name: 'insurance_type', displayName: 'Insurance Type', kind: 'string', description: 'Type of insurance, as your clinic names it' },
	{ name: 'insurance_taxed', displayName: 'Insurance Taxed', kind: 'boolean', description: 'Whether charges billed to the insurer carry tax' },
	{ name: 'insurance_claim_insured_name', displayName: 'Insurance Claim Insured Name', kind: 'string', description: 'Name of the policy holder on the claim' },
	{ name: 'insurance_claim_birthplace', displayName: 'Insurance Claim Birthplace', kind: 'string', description: 'Birthplace of the insured person on the claim' },
	{ name: 'insurance_claim_folio', displayName: 'Insurance Claim Folio', kind: 'string', description: 'Folio the insurer gave the claim' },
	{ name: 'insurance_claim_number', displayName: 'Insurance Claim Number', kind: 'string', description: 'Number of the claim' },
	{ name: 'insurance_claim_movement', displayName: 'Insurance Claim Movement', kind: 'string', description: 'Movement of the claim, as the insurer names it' },
	{ name: 'insurance_claim_adjuster', displayName: 'Insurance Claim Adjuster', kind: 'string', description: 'Adjuster handling the claim' },
	{ name: 'insurance_claim_risk', displayName: 'Insurance Claim Risk', kind: 'string', description: 'Risk covered by the claim, e.g. illness or accident' },
	{ name: 'insurance_claim_institution_name', displayName: 'Insurance Claim Institution Name', kind: 'string', description: 'Hospital or institution of the claim' },
	{ name: 'insurance_claim_institution_address', displayName: 'Insurance Claim Institution Address', kind: 'string', description: 'Address of that institution' },
	{ name: 'insurance_claim_sinister_date', displayName: 'Insurance Claim Incident Date', kind: 'date', description: 'Date of the insured incident (siniestro)' },
	{ name: 'insurance_claim_issue_date', displayName: 'Insurance Claim Issue Date', kind: 'date', description: 'Date the claim was issued' },
	{ name: 'insurance_claim_initial_date', displayName: 'Insurance Claim Initial Date', kind: 'date', description: 'Start date of the claim' },
	{ name: 'insurance_claim_admission_date', displayName: 'Insurance Claim Admission Date', kind: 'date', description: 'Date the patient was admitted' },
	{ name: 'insurance_claim_departure_date', displayName: 'Insurance Claim Departure Date', kind: 'date', description: 'Date the patient was discharged' },
];

function attributeProperty(field: AttributeField): INodeProperties {
	const common = { displayName: field.displayName, name: field.name, description: field.description };
	if (field.kind === 'boolean') return { ...common, type: 'boolean', default: false };
	if (field.kind === 'date') return { ...common, type: 'dateTime', default: '' };
	return { ...common, type: 'string', default: '' };
}

const properties: INodeProperties[] = [
	...idLocator({
		displayName: 'Patient ID',
		name: 'patientId',
		placeholder: '2048',
		urlSegment: 'people',
		description:
			"The patient to change: numeric ID such as 2048 (the id in the value of a Clinic Trigger \"Patient Created\" event), or a link to the person such as a consultation's person link",
	}),
	{
		// Named additionalFields in saved workflows; "Update Fields" is n8n's name for it on an update.
		displayName: 'Update Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		description: 'Only the fields added here are sent; the rest of the patient stays as it is. Fields left empty are not sent.',
		options: [
			{
				displayName: 'Account ID',
				name: 'account_id',
				type: 'string',
				default: '',
				description: 'Numeric ID of the clinic account (physician) the patient belongs to',
			},
			{
				displayName: 'Date of Birth',
				name: 'born_at',
				type: 'dateTime',
				default: '',
				description: 'Only the date is sent (YYYY-MM-DD)',
			},
			{
				displayName: 'Email',
				name: 'email',
				type: 'string',
				placeholder: 'name@email.com',
				default: '',
			},
			{
				displayName: 'First Name',
				name: 'first_name',
				type: 'string',
				default: '',
			},
			{
				displayName: 'Gender',
				name: 'gender',
				type: 'options',
				default: 'female',
				options: [
					{ name: 'Female', value: 'female' },
					{ name: 'Male', value: 'male' },
				],
				description: 'Gender as the service spells it. Another value your service knows can be given with an expression.',
			},
			{
				displayName: 'Last Name',
				name: 'last_name',
				type: 'string',
				default: '',
			},
			{
				displayName: 'Person Attributes',
				name: 'person_attributes',
				type: 'collection',
				placeholder: 'Add Attribute',
				default: {},
				description: 'Reminders and insurance data. Dates are sent as YYYY-MM-DD.',
				options: [...ATTRIBUTE_FIELDS]
					.sort((a, b) => a.displayName.localeCompare(b.displayName))
					.map(attributeProperty),
			},
			{
				displayName: 'Phone Country ID',
				name: 'phone_country_id',
				type: 'string',
				default: '',
				description: 'Numeric ID of the country of the patient\'s phone number, as the service numbers countries',
			},
			{
				displayName: 'Telephone 2',
				name: 'telephone2',
				type: 'string',
				default: '',
				description: 'Second telephone number',
			},
		],
	},
	...recordOutputProperties(SHAPES.patient),
];

export const description = updateDisplayOptions({ show: { resource: ['patient'], operation: ['update'] } }, properties);

/** `person_attributes` as the service takes it, from what the user added. */
function personAttributes(ctx: IExecuteFunctions, given: IDataObject, itemIndex: number): IDataObject {
	const attributes: IDataObject = {};
	for (const field of ATTRIBUTE_FIELDS) {
		const value = given[field.name];
		if (!isSet(value)) continue;
		if (field.kind === 'boolean') attributes[field.name] = value === true || value === 'true';
		else if (field.kind === 'date') attributes[field.name] = toDate(ctx, value, field.displayName, itemIndex);
		else attributes[field.name] = String(value);
	}
	return attributes;
}

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const id = readId(this, 'patientId', 'Patient ID', itemIndex);
	const fields = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;

	const person: IDataObject = {};
	for (const name of ['first_name', 'last_name', 'gender', 'telephone2'] as const) {
		if (isSet(fields[name])) person[name] = String(fields[name]);
	}
	if (isSet(fields.born_at)) person.born_at = toDate(this, fields.born_at, 'Date of Birth', itemIndex);
	if (isSet(fields.email)) person.email = checkEmail(this, fields.email, 'Email', itemIndex);
	const phoneCountryId = checkOptionalId(this, fields.phone_country_id, 'Phone Country ID', itemIndex);
	if (phoneCountryId) person.phone_country_id = phoneCountryId;
	const accountId = checkOptionalId(this, fields.account_id, 'Account ID', itemIndex);
	if (accountId) person.account_id = accountId;
	if (fields.person_attributes && typeof fields.person_attributes === 'object') {
		const attributes = personAttributes(this, fields.person_attributes as IDataObject, itemIndex);
		if (Object.keys(attributes).length) person.person_attributes = attributes;
	}

	if (!Object.keys(person).length) {
		throw new NodeOperationError(this.getNode(), `Nothing to update for patient ${id} in item ${itemIndex + 1}`, {
			itemIndex,
			description: 'Add at least one field under "Update Fields" and give it a value.',
		});
	}

	const body = await client.request(
		{
			method: 'PUT',
			path: `/people/${encodeURIComponent(id)}`,
			body: { person },
			auth: 'integration',
			subject: `Patient ${id}`,
		},
		itemIndex,
	);
	return recordItems(this, itemIndex, SHAPES.patient, unwrap(this, body, 'person', itemIndex));
}
