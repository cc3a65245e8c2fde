import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
	Icon,
} from 'n8n-workflow';

import { API_BASE_URL_EXPRESSION, apiBaseUrlProperty } from './ClinicProperties';

export class ClinicPatientPortalApi implements ICredentialType {
	name = 'clinicPatientPortalApi';

	displayName = 'Clinic Patient Portal API';

	icon: Icon = { light: 'file:clinic.svg', dark: 'file:clinic.dark.svg' };

	documentationUrl = 'https://github.com/n8n-nodes-clinic/n8n-nodes-clinic#credentials';

	properties: INodeProperties[] = [
		apiBaseUrlProperty,
		{
			displayName: 'Portal Token',
			name: 'portalToken',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'Token from the patient portal phone verification: run the Clinic node\'s Patient Portal "Send Code" and "Verify Code" operations. It works only for patient portal requests.',
		},
	];

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		const headers = { ...(requestOptions.headers ?? {}) };
		delete headers.authorization;
		return {
			...requestOptions,
			headers: { ...headers, Authorization: `Bearer ${String(credentials.portalToken ?? '')}` },
		};
	}

	test: ICredentialTestRequest = {
		request: {
			baseURL: API_BASE_URL_EXPRESSION,
			url: '/patient_portal/people',
			method: 'GET',
		},
	};
}
