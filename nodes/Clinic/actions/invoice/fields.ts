import type { INodeProperties } from 'n8n-workflow';

import { idLocator } from '../locators';

/** The Invoice ID field of every operation that works on one invoice. */
export function invoiceIdField(purpose: string): INodeProperties[] {
	return idLocator({
		displayName: 'Invoice ID',
		name: 'invoiceId',
		placeholder: '42',
		urlSegment: 'invoices',
		description: `The invoice ${purpose}: its numeric ID such as 42 (the id that Invoice > Get by Encounter returns, or the id in the value of a Clinic Trigger invoice event), or a link to it`,
	});
}
