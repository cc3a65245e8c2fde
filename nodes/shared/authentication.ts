/** The integration credential choice both nodes offer: one definition, one wording. */
import type { INodePropertyOptions } from 'n8n-workflow';

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
