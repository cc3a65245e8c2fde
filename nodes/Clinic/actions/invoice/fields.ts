import type { INodeProperties } from 'n8n-workflow';

/** The Invoice ID field of every operation that works on one invoice. */
export function invoiceIdField(purpose: string): INodeProperties {
	return {
		displayName: 'Invoice ID',
		name: 'invoiceId',
		type: 'string',
		required: true,
		default: '',
		placeholder: '42',
		description: `Numeric ID of the invoice ${purpose}. Obtain it as the ID that Invoice > Get by Encounter returns, or the ID in the value of a Clinic Trigger invoice event.`,
	};
}
