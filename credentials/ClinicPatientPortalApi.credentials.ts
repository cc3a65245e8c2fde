import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
	Icon,
} from 'n8n-workflow';

export class ClinicPatientPortalApi implements ICredentialType {
	name = 'clinicPatientPortalApi';

	displayName = 'Clinic Patient Portal API';

	icon: Icon = { light: 'file:clinic.svg', dark: 'file:clinic.dark.svg' };

	documentationUrl = 'https://github.com/n8n-nodes-clinic/n8n-nodes-clinic#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'API Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://api.your-clinic-service.com/api/v1',
			description: 'The main API address. With or without /api/v1 and a trailing slash: both work.',
		},
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
			baseURL: '={{$credentials.baseUrl.trim().replace(/\\/+$/, "").replace(/\\/api\\/v1$/, "") + "/api/v1"}}',
			url: '/patient_portal/people',
			method: 'GET',
		},
	};
}
