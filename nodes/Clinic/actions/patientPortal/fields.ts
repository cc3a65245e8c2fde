import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

/** Country code and phone: the patient's identity in the portal's phone verification. */
export const phoneFields: INodeProperties[] = [
	{
		displayName: 'Country Code',
		name: 'countryCode',
		type: 'string',
		required: true,
		default: '52',
		placeholder: '52',
		description: 'International calling code of the patient\'s phone, digits only (52 for Mexico)',
	},
	{
		displayName: 'Phone',
		name: 'phone',
		type: 'string',
		required: true,
		default: '',
		placeholder: '5512345678',
		description: 'The patient\'s mobile number without the country code, as registered at the clinic',
	},
];

/** Digits of a phone field (spaces, dashes, dots and brackets dropped; a leading + kept off). */
export function readDigits(ctx: IExecuteFunctions, parameter: string, label: string, itemIndex: number): string {
	const raw = String(ctx.getNodeParameter(parameter, itemIndex, '') ?? '').trim();
	const digits = raw.replace(/[\s().-]/g, '').replace(/^\+/, '');
	if (!/^\d+$/.test(digits)) {
		throw new NodeOperationError(ctx.getNode(), `${label} must be digits only, but in item ${itemIndex + 1} it is "${raw}"`, {
			itemIndex,
		});
	}
	return digits;
}

export function readPhone(ctx: IExecuteFunctions, itemIndex: number): { country_code: string; phone: string } {
	return {
		country_code: readDigits(ctx, 'countryCode', 'Country Code', itemIndex),
		phone: readDigits(ctx, 'phone', 'Phone', itemIndex),
	};
}
