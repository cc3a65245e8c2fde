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

import { refreshSessionFingerprint, signIn, rememberRefused, wasRefused } from './ClinicAuth';
import { ClinicSignInError, exchange, sessionFromAnswer } from './ClinicTokenEndpoint';
import { placeIntegrationToken } from './ClinicTokenPlacement';
import { keepNewest, keptInProcess } from './ClinicProcessMemory';
import type { ExchangeOutcome } from './ClinicTokenEndpoint';
import { hostProperties, integrationTestRequest, sessionProperties } from './ClinicProperties';
import { normaliseApiBaseUrl } from './ClinicNetwork';

/**
 * The service revokes a refresh token once used. When n8n does not save what
 * preAuthentication returns (the Test button), the rotated token would be lost and the
 * pasted one is already dead, so this process remembers the newest token of each chain,
 * with the stored token it was rotated from. It is only a fallback, and only while the
 * store still holds that token: once the store holds another, a process rotated the chain
 * since (in queue mode, maybe another one), and this process's token is spent.
 */
interface OwnNewest {
	rotatedFrom: string;
	token: string;
}
const CHAINS_KEPT = 1000;
const newestInChain = keptInProcess('newest refresh token of each chain', `${CHAINS_KEPT} chains`, new Map<string, OwnNewest>());

export class ClinicRefreshTokenApi implements ICredentialType {
	name = 'clinicRefreshTokenApi';

	displayName = 'Clinic Refresh Token API';

	icon: Icon = { light: 'file:clinic.svg', dark: 'file:clinic.dark.svg' };

	documentationUrl = 'https://github.com/n8n-nodes-clinic/n8n-nodes-clinic#credentials';

	properties: INodeProperties[] = [
		...hostProperties,
		{
			displayName: 'Refresh Token',
			name: 'refreshToken',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'For an account with two-factor verification: a refresh token from the clinic web app, after you sign in there with the second factor. n8n exchanges it for access tokens and keeps the new refresh token the service hands back after each use.',
		},
		...sessionProperties,
		{
			displayName: 'Rotated Refresh Token',
			name: 'rotatedRefreshToken',
			type: 'hidden',
			typeOptions: { password: true },
			default: '',
		},
	];

	async preAuthentication(this: IHttpRequestHelper, credentials: ICredentialDataDecryptedObject) {
		const baseUrl = normaliseApiBaseUrl(String(credentials.baseUrl ?? ''));
		const fingerprint = refreshSessionFingerprint(credentials);

		return await signIn(credentials, fingerprint, async (): Promise<IDataObject> => {
			const stored =
				credentials.sessionFingerprint === fingerprint ? String(credentials.rotatedRefreshToken ?? '') : '';
			const given = stored || String(credentials.refreshToken ?? '');
			const own = newestInChain.get(fingerprint);
			// The stored token first; this process's newest as a fallback; none the service refused before.
			const candidates = [...new Set([given, own?.rotatedFrom === given ? own.token : ''])].filter((token) => token !== '');
			const first = candidates[0] ?? '';
			let used = '';
			let outcome: ExchangeOutcome | undefined;
			for (const token of candidates.filter((candidate) => !wasRefused(candidate))) {
				used = token;
				outcome = await exchange(this, baseUrl, 'refresh_token', { refresh_token: token });
				if (outcome.kind === 'token') break;
				rememberRefused(token);
			}
			if (outcome?.kind !== 'token') {
				// No automatic retries after a refused refresh: only a newer token helps, from
				// n8n's store (another process) or from the user.
				throw new ClinicSignInError(
					'The clinic service refused the refresh token (it was already used, revoked or has expired). Sign in to the clinic web app, get a new refresh token and paste it into the Clinic Refresh Token API credential.',
					first,
				);
			}
			const rotated = outcome.answer.refresh_token ?? used;
			keepNewest(newestInChain, fingerprint, { rotatedFrom: given, token: rotated }, CHAINS_KEPT);
			return { ...sessionFromAnswer(outcome.answer, fingerprint), rotatedRefreshToken: rotated };
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
