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

/**
 * Get People's Authentication: the portal credential, or (from node version 1.2) none, with
 * the token of an earlier Verify Code step. It names the portal credential as the other
 * Authentication names the staff ones, so one property tells every credential apart. Both
 * definitions offer None, so n8n's editor takes neither for a main authentication field
 * (which would hide Authentication, Resource and Operation). Before 1.2 it is fixed (hidden),
 * so that a Get People node saved then, which holds no Authentication, shows its credential.
 */
const portalTokenOption = {
	name: 'Portal Token (Clinic Patient Portal API)',
	value: 'clinicPatientPortalApi',
	description: "A patient's portal token, from a Clinic Patient Portal API credential",
};
const tokenFromStepOption = {
	name: 'None (Token From an Earlier Step)',
	value: 'none',
	description: 'The token output by Patient Portal > Verify Code in this workflow',
};
const getPeople = { resource: ['patientPortal'], operation: ['getPeople'] };

const portalAuthentication = (type: 'hidden' | 'options', versions: number[]): INodeProperties => ({
	displayName: 'Authentication',
	name: 'authentication',
	type,
	options: [portalTokenOption, tokenFromStepOption],
	default: 'clinicPatientPortalApi',
	displayOptions: { show: { '@version': versions, ...getPeople } },
});

export const portalAuthenticationProperties: INodeProperties[] = [portalAuthentication('hidden', [1, 1.1]), portalAuthentication('options', [1.2])];
