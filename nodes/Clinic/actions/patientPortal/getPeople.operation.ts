import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { describeBaseUrlProblem } from '../../../shared/urls';
import { limitRecords, returnAllOrLimit } from '../common';
import { SHAPES } from '../../../shared/output';
import { recordOutputProperties } from '../../../shared/outputProperties';
import { recordItems } from '../output';
import { recordsOf } from '../shared';

const properties: INodeProperties[] = [
	{
		displayName: 'Portal Token From',
		name: 'tokenSource',
		type: 'options',
		noDataExpression: true,
		default: 'credential',
		options: [
			{
				name: 'Credential',
				value: 'credential',
				description: 'A "Clinic Patient Portal API" credential holds the token',
			},
			{
				name: 'Earlier Step',
				value: 'parameter',
				description: 'The token output by Patient Portal > Verify Code in this workflow, given as an expression',
			},
		],
	},
	{
		displayName:
			'Signs in with the "Clinic Patient Portal API" credential: its token comes from Patient Portal > Verify Code',
		name: 'portalNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { tokenSource: ['credential'] } },
	},
	{
		displayName: 'Portal Token',
		name: 'portalToken',
		type: 'string',
		typeOptions: { password: true },
		required: true,
		default: '',
		placeholder: '{{ $json.token }}',
		description:
			'The token output by Patient Portal > Verify Code, as an expression that reads its token field. It is sent only to the portal and never appears in output or error messages.',
		displayOptions: { show: { tokenSource: ['parameter'] } },
	},
	{
		displayName: 'API Base URL',
		name: 'portalBaseUrl',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'https://api.your-clinic-service.com/api/v1',
		description: 'Address of the clinic API, the same one Verify Code used',
		displayOptions: { show: { tokenSource: ['parameter'] } },
	},
	...returnAllOrLimit,
	...recordOutputProperties(SHAPES.patient),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['patientPortal'], operation: ['getPeople'] } },
	properties,
);

/** The token and address of an earlier Verify Code step, checked before anything is sent. */
function portalFromStep(ctx: IExecuteFunctions, itemIndex: number): { token: string; baseUrl: string } {
	const token = String(ctx.getNodeParameter('portalToken', itemIndex, '') ?? '').trim();
	if (!token) {
		throw new NodeOperationError(ctx.getNode(), `Portal Token is empty in item ${itemIndex + 1}`, {
			itemIndex,
			description:
				'Give the token of Patient Portal > Verify Code, e.g. {{ $json.token }} when this node follows it, or {{ $(\'Verify Code\').item.json.token }}.',
		});
	}
	const baseUrl = String(ctx.getNodeParameter('portalBaseUrl', itemIndex, '') ?? '').trim();
	const problem = describeBaseUrlProblem(baseUrl, 'API Base URL');
	if (problem) throw new NodeOperationError(ctx.getNode(), `${problem} (item ${itemIndex + 1})`, { itemIndex });
	return { token, baseUrl };
}

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const fromStep = this.getNodeParameter('tokenSource', itemIndex, 'credential') === 'parameter';
	const portal = fromStep ? portalFromStep(this, itemIndex) : undefined;
	const body = await client.request(
		{ method: 'GET', path: '/patient_portal/people', auth: 'portal', portal, subject: 'The portal\'s people' },
		itemIndex,
	);
	return recordItems(this, itemIndex, SHAPES.patient, limitRecords(this, recordsOf(this, body, 'people', itemIndex), itemIndex));
}
