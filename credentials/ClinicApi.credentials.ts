import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IDataObject,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INodeProperties,
	Icon,
} from 'n8n-workflow';

import { isTransportData, rememberRefused, passwordSessionFingerprint, signIn, wasRefused } from './ClinicAuth';
import { ClinicSignInError, TWO_FACTOR_MESSAGE, exchange, sessionFromAnswer, withServiceWords } from './ClinicTokenEndpoint';
import { placeIntegrationToken } from './ClinicTokenPlacement';
import { hostProperties, integrationTestRequest, sessionProperties } from './ClinicProperties';
import { normaliseApiBaseUrl } from './ClinicNetwork';

export class ClinicApi implements ICredentialType {
	name = 'clinicApi';

	displayName = 'Clinic API';

	icon: Icon = { light: 'file:clinic.svg', dark: 'file:clinic.dark.svg' };

	documentationUrl = 'https://github.com/n8n-nodes-clinic/n8n-nodes-clinic#credentials';

	properties: INodeProperties[] = [
		...hostProperties,
		{
			displayName: 'Username',
			name: 'username',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'integrations@your-clinic.com',
			description: 'E-mail address of the integration account your clinic service set up for n8n',
		},
		{
			displayName: 'Password',
			name: 'password',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'Password of that account. For an account with two-factor verification use the Clinic Refresh Token API credential instead.',
		},
		...sessionProperties,
		{
			displayName: 'Refresh Token',
			name: 'refreshToken',
			type: 'hidden',
			typeOptions: { password: true },
			default: '',
		},
	];

	async preAuthentication(this: IHttpRequestHelper, credentials: ICredentialDataDecryptedObject) {
		const baseUrl = normaliseApiBaseUrl(String(credentials.baseUrl ?? ''));
		const fingerprint = passwordSessionFingerprint(credentials);

		return await signIn(credentials, fingerprint, async (): Promise<IDataObject> => {
			// A stored refresh token is used only when it belongs to the same base URL, user and password.
			const refreshToken =
				credentials.sessionFingerprint === fingerprint ? String(credentials.refreshToken ?? '') : '';
			if (refreshToken) {
				const refreshed = wasRefused(refreshToken)
					? undefined
					: await exchange(this, baseUrl, 'refresh_token', { refresh_token: refreshToken });
				if (refreshed?.kind === 'token') {
					return {
						...sessionFromAnswer(refreshed.answer, fingerprint),
						refreshToken: refreshed.answer.refresh_token ?? refreshToken,
					};
				}
				// Refused: another process may have rotated it (the transport looks in n8n's store,
				// then asks again without it); otherwise the password, once.
				rememberRefused(refreshToken);
				if (isTransportData(credentials)) {
					throw new ClinicSignInError('The clinic service refused the stored refresh token.', refreshToken);
				}
			}
			const signedIn = await exchange(this, baseUrl, 'password', {
				username: String(credentials.username ?? ''),
				password: String(credentials.password ?? ''),
			});
			if (signedIn.kind === 'twoFactor') throw new ClinicSignInError(TWO_FACTOR_MESSAGE);
			if (signedIn.kind === 'refused') {
				const message = 'The clinic service refused the username or password. Check both in the Clinic API credential.';
				// The node error keeps the service's own words in its details; the Test button shows the message alone.
				throw new ClinicSignInError(isTransportData(credentials) ? withServiceWords(message, signedIn.detail) : message);
			}
			return {
				...sessionFromAnswer(signedIn.answer, fingerprint),
				refreshToken: signedIn.answer.refresh_token ?? '',
			};
		});
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		return placeIntegrationToken(credentials, requestOptions);
	}

	test: ICredentialTestRequest = integrationTestRequest;
}
