/** The integration credential choice both nodes offer: one definition, one wording. */
import type { INodeCredentialDescription, INodeProperties, INodePropertyOptions } from 'n8n-workflow';

export const integrationAuthenticationOptions: INodePropertyOptions[] = [
	{
		name: 'Password (Clinic API)',
		value: 'clinicApi',
		description: 'Integration account with username and password; tokens are renewed automatically',
	},
	{
		name: 'Refresh Token (Clinic Refresh Token API)',
		value: 'clinicRefreshTokenApi',
		description: 'For accounts with two-factor verification',
	},
];

/** The action node also runs public operations without any credential. */
export const nodeAuthenticationOptions: INodePropertyOptions[] = [
	...integrationAuthenticationOptions,
	{
		name: 'None (Public Operations Only)',
		value: 'none',
		description: 'Waiting rooms, states and the patient portal sign-in need no credential',
	},
];

/** The credentials of the two triggers: the one the Authentication choice names. */
export const integrationCredentials: INodeCredentialDescription[] = [
	{ name: 'clinicApi', required: true, displayOptions: { show: { authentication: ['clinicApi'] } } },
	{
		name: 'clinicRefreshTokenApi',
		required: true,
		displayOptions: { show: { authentication: ['clinicRefreshTokenApi'] } },
	},
];

/** The triggers' Authentication parameter. */
export const integrationAuthenticationProperty: INodeProperties = {
	displayName: 'Authentication',
	name: 'authentication',
	type: 'options',
	options: integrationAuthenticationOptions,
	default: 'clinicApi',
};
