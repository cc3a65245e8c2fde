import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { portalAuthenticationProperties } from '../../../shared/authentication';
import { PORTAL_CREDENTIAL_TYPE } from '../../../shared/credentialSettings';
import type { ClinicClient } from '../../../shared/transport';
import { describeBaseUrlProblem } from '../../../shared/urls';
import { limitRecords, returnAllOrLimit } from '../common';
import { SHAPES } from '../../../shared/output';
import { recordOutputProperties } from '../../../shared/outputProperties';
import { recordItems } from '../output';
import { recordsOf } from '../shared';

/** Before 1.2 Portal Token From chose where the token comes from; from 1.2 Authentication does. */
const BEFORE_1_2 = { '@version': [1, 1.1] };
const FROM_1_2 = { '@version': [1.2] };
/** Whether Authentication (1.2 on) chooses where the token comes from, not Portal Token From. */
const authenticationChooses = (ctx: IExecuteFunctions) => ctx.getNode().typeVersion >= 1.2;

const properties: INodeProperties[] = [
	...portalAuthenticationProperties,
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
		displayOptions: { show: BEFORE_1_2 },
	},
	{
		// From 1.2 the portal credential is chosen by Authentication alone: the credential's other condition always holds.
		displayName: 'Portal Token From',
		name: 'tokenSource',
		type: 'hidden',
		default: 'credential',
		displayOptions: { show: FROM_1_2 },
	},
	{
		displayName:
			'Signs in with the "Clinic Patient Portal API" credential: its token comes from Patient Portal > Verify Code',
		name: 'portalNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { tokenSource: ['credential'], authentication: [PORTAL_CREDENTIAL_TYPE] } },
	},
	...[
		{ ...BEFORE_1_2, tokenSource: ['parameter'] },
		{ ...FROM_1_2, authentication: ['none'] },
	].flatMap((fromStep): INodeProperties[] => [
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
			displayOptions: { show: fromStep },
		},
		{
			displayName: 'API Base URL',
			name: 'portalBaseUrl',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'https://api.your-clinic-service.com/api/v1',
			description: 'Address of the clinic API, the same one Verify Code used',
			displayOptions: { show: fromStep },
		},
	]),
	...returnAllOrLimit,
	...recordOutputProperties(SHAPES.patient),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['patientPortal'], operation: ['getPeople'] } },
	properties,
);

/**
 * A node switched to Get People may keep the Authentication it had (n8n keeps a value that
 * is not the default): n8n then offers it no portal credential, and would only say "Credentials not found".
 */
function requirePortalAuthentication(ctx: IExecuteFunctions, itemIndex: number): void {
	const authentication = ctx.getNodeParameter('authentication', itemIndex, PORTAL_CREDENTIAL_TYPE);
	if (authentication === PORTAL_CREDENTIAL_TYPE) return;
	throw new NodeOperationError(ctx.getNode(), 'Set Authentication to Portal Token: Get People signs in with a patient\'s portal token', {
		itemIndex,
		description:
			authenticationChooses(ctx)
				? `This node holds Authentication "${String(authentication)}" from another operation. Choose Portal Token (Clinic Patient Portal API) in Authentication and pick the credential, or None to give the token of an earlier Verify Code step.`
				: `This node (version ${ctx.getNode().typeVersion}) holds Authentication "${String(authentication)}" from another operation, which its panel does not show. Add a new Clinic node for Get People instead: it lets you choose.`,
	});
}

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
	const fromStep = authenticationChooses(this)
		? this.getNodeParameter('authentication', itemIndex, PORTAL_CREDENTIAL_TYPE) === 'none'
		: this.getNodeParameter('tokenSource', itemIndex, 'credential') === 'parameter';
	if (!fromStep) requirePortalAuthentication(this, itemIndex);
	const portal = fromStep ? portalFromStep(this, itemIndex) : undefined;
	const body = await client.request(
		{ method: 'GET', path: '/patient_portal/people', auth: 'portal', portal, subject: 'The portal\'s people' },
		itemIndex,
	);
	return recordItems(this, itemIndex, SHAPES.patient, limitRecords(this, recordsOf(this, body, 'people', itemIndex), itemIndex));
}
