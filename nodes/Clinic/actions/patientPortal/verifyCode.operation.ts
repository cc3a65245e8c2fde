import { NodeApiError, NodeOperationError, updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { apiFailure, isHttpStatus, settle } from '../shared';
import { phoneFields, readPhone } from './fields';

const properties: INodeProperties[] = [
	...phoneFields,
	{
		displayName: 'Code',
		name: 'code',
		type: 'string',
		typeOptions: { password: true },
		required: true,
		default: '',
		description:
			'The one-time code the patient received by SMS after Patient Portal > Send Code. It is never shown in output or error messages.',
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['patientPortal'], operation: ['verifyCode'] } },
	[
		...properties,
		{
			displayName:
				'The output is the portal token. Patient Portal > Get People can use it in this workflow (Portal Token From: Earlier Step), or paste it into a "Clinic Patient Portal API" credential. It opens only the portal, never the integration API.',
			name: 'tokenNotice',
			type: 'notice',
			default: '',
		},
	],
);

/** The service's message with the code, should it repeat it, blacked out. */
function scrub(text: string | undefined | null, code: string): string | undefined {
	if (!text) return undefined;
	return code ? text.split(code).join('••••') : text;
}

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const phone = readPhone(this, itemIndex);
	const code = String(this.getNodeParameter('code', itemIndex, '') ?? '').trim();
	if (!/^\d+$/.test(code)) {
		// The code itself stays out of the message.
		throw new NodeOperationError(
			this.getNode(),
			code ? `Code must be digits only in item ${itemIndex + 1}` : `Code is empty in item ${itemIndex + 1}`,
			{ itemIndex, description: 'Enter the code the patient received by SMS after Send Code.' },
		);
	}

	// Public: the portal's phone verification needs no credential.
	const outcome = await settle(
		client.request(
			{ method: 'POST', path: '/patient_portal/validate', body: { code, ...phone }, auth: 'none', subject: 'The portal verification' },
			itemIndex,
		),
	);
	if (!outcome.ok) {
		const { error } = outcome;
		if (isHttpStatus(error, 401) || isHttpStatus(error, 422)) {
			const said = (error.errorResponse as { error?: unknown } | undefined)?.error;
			throw apiFailure(this, {
				message: 'The portal refused the verification code: it is wrong or has expired',
				description: scrub(
					`${typeof said === 'string' && said ? `The service said: "${said}". ` : ''}Send a new code with Patient Portal > Send Code and verify it soon after.`,
					code,
				),
				httpCode: error.httpCode,
				itemIndex,
			});
		}
		if (error instanceof NodeApiError) {
			throw apiFailure(this, {
				message: scrub(error.message, code) ?? 'The portal verification failed',
				description: scrub(error.description, code),
				httpCode: error.httpCode,
				itemIndex,
			});
		}
		throw new NodeOperationError(this.getNode(), scrub(error.message, code) ?? 'The portal verification failed', { itemIndex });
	}

	const token = (outcome.value as IDataObject | undefined)?.token;
	if (typeof token !== 'string' || token === '') {
		throw new NodeOperationError(this.getNode(), 'The portal accepted the code but sent no token', { itemIndex });
	}
	return [{ json: { token } }];
}
