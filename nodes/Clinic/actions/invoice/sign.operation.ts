import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { readId, unwrap } from '../common';
import { SHAPES } from '../../../shared/output';
import { recordOutputProperties } from '../../../shared/outputProperties';
import { recordItems } from '../output';
import { apiFailure, isHttpStatus, settle } from '../shared';
import { invoiceIdField } from './fields';

export const description = updateDisplayOptions({ show: { resource: ['invoice'], operation: ['sign'] } }, [
	...invoiceIdField('to sign. Signing stamps the CFDI electronic invoice and cannot be undone'),
	...recordOutputProperties(SHAPES.invoice),
]);

/** The service's words for an invoice that was signed before (422). */
const ALREADY_SIGNED = /already|ya (?:est[aá]|fue) (?:firmad|timbrad)/i;

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const id = readId(this, 'invoiceId', 'Invoice ID', itemIndex);
	const outcome = await settle(
		client.request(
			{ method: 'POST', path: `/invoices/${encodeURIComponent(id)}/sign`, auth: 'integration', subject: `Invoice ${id}` },
			itemIndex,
		),
	);
	if (!outcome.ok) {
		const { error } = outcome;
		if (isHttpStatus(error, 422) && ALREADY_SIGNED.test(`${error.message} ${error.description ?? ''}`)) {
			throw apiFailure(this, {
				message: `Invoice ${id} is already signed: its CFDI was stamped before, so it cannot be signed again`,
				description:
					'Nothing was changed. To read the signed invoice (signed_at, tax_attributes) use Invoice > Get by Encounter; to get the CFDI use Download XML or Download PDF.',
				httpCode: '422',
				itemIndex,
			});
		}
		throw error;
	}
	return recordItems(this, itemIndex, SHAPES.invoice, unwrap(this, outcome.value, 'invoice', itemIndex));
}
