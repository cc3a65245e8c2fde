/**
 * The integration credential's session as one execution holds it (the decrypted `data`
 * that n8n updates when it signs in): one request at a time has n8n sign in, the others
 * wait for it; a refused sign-in fails the rest of the execution at once; after a refused
 * token or refresh token, n8n's store is read for the newer session another process saved.
 */
import { NodeApiError, sleep } from 'n8n-workflow';
import type { ICredentialDataDecryptedObject, JsonObject } from 'n8n-workflow';

import {
	claimSignIn,
	forgetSignInFailure,
	passwordSessionFingerprint,
	putTokenAside,
	refreshSessionFingerprint,
	refreshTokenOf,
	sessionNeedsNewToken,
	signInFailureOf,
	signInUnderWay,
	tokenAsideOf,
} from '../../credentials/ClinicAuth';
import type { Context, CredentialSettings, IntegrationCredentialType } from './credentialSettings';

const fingerprintOf: Record<IntegrationCredentialType, (c: ICredentialDataDecryptedObject) => string> = {
	clinicApi: passwordSessionFingerprint,
	clinicRefreshTokenApi: refreshSessionFingerprint,
};

/**
 * After a refused refresh token, another process may still be saving the newer one (on a
 * busy database, for seconds): n8n's store is read this many times, a second apart.
 */
const STORE_LOOKS = 5;
const STORE_LOOK_EVERY_MS = 1000;

export class Session {
	/** A read of n8n's store under way after a refused token. */
	private adopting?: Promise<void>;

	constructor(
		private readonly ctx: Context,
		private readonly settings: CredentialSettings,
	) {}

	/**
	 * Sends with the session: `send` signs through n8n (which signs in when the token is
	 * empty); `signInFailed` makes the error a refused sign-in is reported with.
	 */
	async send<T>(
		type: IntegrationCredentialType,
		data: ICredentialDataDecryptedObject,
		send: () => Promise<T>,
		signInFailed: (message: string) => Error,
	): Promise<{ response: T; sentToken: string }> {
		for (let underWay = signInUnderWay(data); underWay; underWay = signInUnderWay(data)) await underWay;
		const earlier = signInFailureOf(data);
		// One refused sign-in per execution: repeating it per item could lock the account.
		if (earlier) throw signInFailed(earlier.message);
		if (data.accessToken && sessionNeedsNewToken(data, fingerprintOf[type](data))) putTokenAside(data);
		const release = data.accessToken ? undefined : claimSignIn(data);
		try {
			for (let attempt = 0; ; attempt++) {
				const tokenBefore = String(data.accessToken ?? '');
				try {
					const response = await send();
					return { response, sentToken: tokenBefore || String(data.accessToken ?? '') };
				} catch (error) {
					const failure = signInFailureOf(data);
					if (!failure || !release) throw new NodeApiError(this.ctx.getNode(), error as JsonObject);
					// The service refused a refresh token another process may have rotated: look in n8n's store, once.
					if (attempt === 0 && failure.refusedRefreshToken) {
						const newer = await this.adoptAfterRefusedRefresh(type, data, failure.refusedRefreshToken);
						if (!newer && type === 'clinicApi') data.refreshToken = ''; // then the password, once
						if (newer || type === 'clinicApi') {
							forgetSignInFailure(data);
							continue;
						}
					}
					throw signInFailed(failure.message);
				}
			}
		} finally {
			release?.();
		}
	}

	/**
	 * After a 401: unless another request already replaced the refused token, reads n8n's
	 * store (in queue mode another process may have renewed the session, and revoked ours)
	 * and takes a newer usable token from it; else the next request signs in.
	 */
	async afterRefusedToken(refusedToken: string): Promise<void> {
		const type = this.settings.integrationType;
		if (!type) return;
		const { data } = await this.settings.read(type);
		if (data.accessToken !== refusedToken) return;
		this.adopting ??= this.adoptStoredSession(type, data, refusedToken).then(() => (this.adopting = undefined));
		await this.adopting;
	}

	/** Reads the stored credential into this execution's copy; true when it holds another usable token. */
	private async adoptStoredSession(type: IntegrationCredentialType, data: ICredentialDataDecryptedObject, refusedToken: string): Promise<boolean> {
		Object.assign(data, await this.ctx.getCredentials(type));
		const token = String(data.accessToken ?? '');
		if (token && token !== refusedToken && !sessionNeedsNewToken(data, fingerprintOf[type](data))) return true;
		if (token) putTokenAside(data);
		data.accessToken = '';
		return false;
	}

	/** Another process saves its new pair just after the service answered it: more looks follow, a second apart. */
	private async adoptAfterRefusedRefresh(type: IntegrationCredentialType, data: ICredentialDataDecryptedObject, refused: string): Promise<boolean> {
		const refusedAccessToken = tokenAsideOf(data) ?? String(data.accessToken ?? '');
		for (let look = 0; look < STORE_LOOKS; look++) {
			if (look > 0) await sleep(STORE_LOOK_EVERY_MS);
			if ((await this.adoptStoredSession(type, data, refusedAccessToken)) || refreshTokenOf(data) !== refused) return true;
		}
		return false;
	}
}
