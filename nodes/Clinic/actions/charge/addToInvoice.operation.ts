import { updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { idLocator } from '../locators';
import { checkNumber, checkOptionalId, readId, toItems, unwrap } from '../common';
import { isSet } from '../shared';

const properties: INodeProperties[] = [
	...idLocator({
		displayName: 'Invoice ID',
		name: 'invoiceId',
		placeholder: '42',
		urlSegment: 'invoices',
		description:
			'The invoice to charge: numeric ID such as 42 (the id that Invoice > Get by Encounter returns), or a link to it. A signed invoice takes no new charges.',
	}),
	{
		displayName: 'Quantity',
		name: 'quantity',
		type: 'number',
		required: true,
		default: 1,
		typeOptions: { minValue: 0 },
		description: 'How many units of the item to charge',
	},
	{
		displayName: 'Value',
		name: 'value',
		type: 'number',
		required: true,
		default: 0,
		typeOptions: { minValue: 0, numberPrecision: 2 },
		description: 'Price of one unit, in currency units (e.g. 450.00), not cents',
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
				description: 'Numeric ID of the account (physician) the charge belongs to',
			},
			{
				displayName: 'Accounting Type',
				name: 'accounting_type',
				type: 'options',
				default: 'service',
				options: [
					{ name: 'Service', value: 'service', description: 'A consultation, procedure or other service' },
					{ name: 'Product', value: 'product', description: 'A drug, material or other goods' },
				],
				description:
					'Accounting type of the charge (it decides the CFDI product code). Another type your service knows can be given with an expression.',
			},
			{
				displayName: 'Invoice Item ID',
				name: 'invoice_item_id',
				type: 'string',
				default: '',
				description: 'Numeric ID of the item in the clinic\'s charge catalog (see the Clinic Trigger\'s invoice-item-catalog events)',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['charge'], operation: ['addToInvoice'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const invoiceId = readId(this, 'invoiceId', 'Invoice ID', itemIndex);
	const quantity = checkNumber(this, this.getNodeParameter('quantity', itemIndex), 'Quantity', itemIndex);
	const value = checkNumber(this, this.getNodeParameter('value', itemIndex), 'Value', itemIndex);
	const fields = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;

	// The service shows every field as a string.
	const charge: IDataObject = { invoice_id: invoiceId, quantity, value };
	const invoiceItemId = checkOptionalId(this, fields.invoice_item_id, 'Invoice Item ID', itemIndex);
	if (invoiceItemId) charge.invoice_item_id = invoiceItemId;
	if (isSet(fields.accounting_type)) charge.accounting_type = String(fields.accounting_type).trim();
	const accountId = checkOptionalId(this, fields.account_id, 'Account ID', itemIndex);
	if (accountId) charge.account_id = accountId;

	const body = await client.request(
		{
			method: 'POST',
			path: '/consultation_invoice_items',
			body: { consultation_invoice_item: charge },
			auth: 'integration',
			subject: `Invoice ${invoiceId}`,
		},
		itemIndex,
	);
	return toItems(unwrap(this, body ?? {}, 'consultation_invoice_item', itemIndex));
}
