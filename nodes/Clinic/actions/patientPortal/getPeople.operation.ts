import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { toItems } from '../common';
import { recordsOf } from '../shared';

export const description = updateDisplayOptions({ show: { resource: ['patientPortal'], operation: ['getPeople'] } }, [
	{
		displayName:
			'Signs in with the "Clinic Patient Portal API" credential: its token comes from Patient Portal > Verify Code',
		name: 'portalNotice',
		type: 'notice',
		default: '',
	},
]);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const body = await client.request(
		{ method: 'GET', path: '/patient_portal/people', auth: 'portal', subject: 'The portal\'s people' },
		itemIndex,
	);
	return toItems(recordsOf(this, body, 'people', itemIndex));
}
