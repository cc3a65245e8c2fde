import { updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { toItems } from '../common';
import { phoneFields, readPhone } from './fields';

export const description = updateDisplayOptions(
	{ show: { resource: ['patientPortal'], operation: ['sendCode'] } },
	phoneFields,
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const phone = readPhone(this, itemIndex);
	// Public: the portal's phone verification needs no credential.
	const body = await client.request(
		{ method: 'POST', path: '/patient_portal/auth', body: phone, auth: 'none', subject: 'The portal verification code' },
		itemIndex,
	);
	const answer = body && typeof body === 'object' && !Array.isArray(body) ? (body as IDataObject) : {};
	return toItems({ sent: true, ...phone, ...answer });
}
