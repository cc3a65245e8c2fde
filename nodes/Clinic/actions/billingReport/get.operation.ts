import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { toDate, toItems } from '../common';
import { SHAPES } from '../../../shared/output';
import { recordOutputProperties } from '../../../shared/outputProperties';
import { recordItems } from '../output';
import { isSet } from '../shared';

/** Query parameters the node sets itself; "Extra Query Parameters" may not repeat them. */
const NAMED_PARAMETERS = ['start', 'end', 'status', 'person'];

const properties: INodeProperties[] = [
	{
		displayName: 'Start Date',
		name: 'start',
		type: 'dateTime',
		required: true,
		default: '',
		description: 'First day of the report (encounters created on or after it). Only the date is sent.',
	},
	{
		displayName: 'End Date',
		name: 'end',
		type: 'dateTime',
		required: true,
		default: '',
		description: 'Last day of the report, included. Only the date is sent.',
	},
	{
		displayName: 'Output',
		name: 'output',
		type: 'options',
		default: 'encounters',
		options: [
			{
				name: 'One Item per Encounter',
				value: 'encounters',
				description: 'Each encounter of the report (invoice totals, status, patient, physician) becomes an item',
			},
			{
				name: 'Whole Report',
				value: 'report',
				description: 'One item with the encounters list and the invoice_metrics totals',
			},
		],
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		options: [
			{
				displayName: 'Patient',
				name: 'person',
				type: 'string',
				default: '',
				description: 'Only encounters of this patient: a patient ID, or a name as the service matches it (sent as person)',
			},
			{
				displayName: 'Status',
				name: 'status',
				type: 'options',
				default: 'signed',
				options: [
					{ name: 'Signed', value: 'signed', description: 'Invoices whose CFDI is stamped' },
					{ name: 'Unsigned', value: 'unsigned', description: 'Invoices not signed yet' },
				],
				description:
					'Only invoices with this status. Another status your service knows can be given with an expression.',
			},
		],
	},
	{
		displayName: 'Extra Query Parameters',
		name: 'extraQuery',
		type: 'fixedCollection',
		placeholder: 'Add Parameter',
		default: {},
		typeOptions: { multipleValues: true },
		description: 'Other filters your service accepts on this report, sent as they are',
		options: [
			{
				displayName: 'Parameter',
				name: 'parameters',
				values: [
					{
						displayName: 'Name',
						name: 'name',
						type: 'string',
						default: '',
					},
					{
						displayName: 'Value',
						name: 'value',
						type: 'string',
						default: '',
					},
				],
			},
		],
	},
	...recordOutputProperties(SHAPES.billingEncounter, 'Encounter Fields'),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['billingReport'], operation: ['get'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const start = toDate(this, this.getNodeParameter('start', itemIndex), 'Start Date', itemIndex);
	const end = toDate(this, this.getNodeParameter('end', itemIndex), 'End Date', itemIndex);
	if (end < start) {
		throw new NodeOperationError(this.getNode(), `End Date (${end}) is before Start Date (${start}) in item ${itemIndex + 1}`, {
			itemIndex,
		});
	}
	const fields = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	const extra = this.getNodeParameter('extraQuery.parameters', itemIndex, []) as Array<{ name?: string; value?: unknown }>;
	const output = this.getNodeParameter('output', itemIndex, 'encounters') as string;

	const qs: IDataObject = { start, end };
	if (isSet(fields.status)) qs.status = String(fields.status).trim();
	if (isSet(fields.person)) qs.person = String(fields.person).trim();
	for (const [position, parameter] of extra.entries()) {
		const name = String(parameter.name ?? '').trim();
		if (!name || NAMED_PARAMETERS.includes(name) || name in qs) {
			throw new NodeOperationError(
				this.getNode(),
				name
					? `Extra query parameter "${name}" is given twice in item ${itemIndex + 1}`
					: `Extra query parameter ${position + 1} has no name in item ${itemIndex + 1}`,
				{
					itemIndex,
					description: 'Start, end, status and person have their own fields; each extra parameter needs a distinct name.',
				},
			);
		}
		qs[name] = parameter.value === undefined || parameter.value === null ? '' : String(parameter.value);
	}

	const body = (await client.request(
		{ method: 'GET', path: '/reports/consultation_invoice_items', qs, auth: 'integration', subject: 'The billing report' },
		itemIndex,
	)) as IDataObject;

	if (output === 'report') {
		const report = body ?? {};
		if (!Array.isArray(report.encounters)) return toItems(report);
		const encounters = recordItems(this, itemIndex, SHAPES.billingEncounter, report.encounters).map((item) => item.json);
		return toItems({ ...report, encounters });
	}
	const encounters = body?.encounters;
	if (!Array.isArray(encounters)) {
		throw new NodeOperationError(this.getNode(), 'The clinic service answered the billing report without an encounters list', {
			itemIndex,
			description: 'Choose Output "Whole Report" to see the answer as it is.',
		});
	}
	return recordItems(this, itemIndex, SHAPES.billingEncounter, encounters);
}
