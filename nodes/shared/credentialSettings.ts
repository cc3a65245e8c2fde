/**
 * What the credentials of a node say: decrypted once per execution (the `data` object n8n
 * updates when it signs in), which credential a request needs, and where it goes.
 */
import type {
	ICredentialDataDecryptedObject,
	ICredentialsDecrypted,
	IExecuteFunctions,
	IHookFunctions,
	ILoadOptionsFunctions,
	IPollFunctions,
	IWebhookFunctions,
} from 'n8n-workflow';

import { markTransportData } from '../../credentials/ClinicAuth';
import { transportError } from './errors';
import type { ClinicRequest } from './requestTypes';
import { WEBHOOK_SERVICE_URL_FIELD, describeBaseUrlProblem, missingWebhookServiceUrlMessage } from './urls';
import { normaliseApiBaseUrl, normaliseWebhookBaseUrl } from '../../credentials/ClinicNetwork';

export type IntegrationCredentialType = 'clinicApi' | 'clinicRefreshTokenApi';
export const PORTAL_CREDENTIAL_TYPE = 'clinicPatientPortalApi';
/** The node's Authentication; the portal credential is Get People's. */
export type Authentication = IntegrationCredentialType | typeof PORTAL_CREDENTIAL_TYPE | 'none';

export type Context = IExecuteFunctions | IHookFunctions | IWebhookFunctions | ILoadOptionsFunctions | IPollFunctions;

export interface IntegrationSettings {
	apiBaseUrl: string;
	webhookBaseUrl: string;
	topicPrefix: string;
}


export interface DecryptedCredential {
	data: ICredentialDataDecryptedObject;
	decrypted: ICredentialsDecrypted;
}

export class CredentialSettings {
	private readonly decrypted = new Map<string, Promise<DecryptedCredential>>();

	constructor(
		private readonly ctx: Context,
		private readonly authentication: Authentication,
		/** Base URL for public operations run without a credential. */
		private readonly publicBaseUrl: string,
		/** Where the credential is read from: n8n's store, unless a caller shares reads. */
		private readonly readCredentials: (type: string) => Promise<ICredentialDataDecryptedObject> = async (type) => await ctx.getCredentials(type),
	) {}

	get integrationType(): IntegrationCredentialType | undefined {
		return this.authentication === 'none' || this.authentication === PORTAL_CREDENTIAL_TYPE ? undefined : this.authentication;
	}

	/** The credential as decrypted once; `data` is the object n8n updates when it signs in. */
	async read(type: string): Promise<DecryptedCredential> {
		let pending = this.decrypted.get(type);
		if (!pending) {
			pending = (async () => {
				// A copy of its own (the fields are flat): n8n writes a new token into it, and a read may be shared.
				const data = { ...(await this.readCredentials(type)) };
				markTransportData(data);
				const reference = this.ctx.getNode().credentials?.[type];
				return { data, decrypted: { id: reference?.id ?? '', name: reference?.name ?? type, type, data } };
			})();
			this.decrypted.set(type, pending);
			pending.catch(() => this.decrypted.delete(type));
		}
		return await pending;
	}

	requireIntegration(itemIndex: number): IntegrationCredentialType {
		if (this.integrationType) return this.integrationType;
		throw transportError(
			this.ctx.getNode(),
			'This operation needs a Clinic credential: set "Authentication" to Password or Refresh Token and pick a credential',
			'(none)',
			itemIndex,
		);
	}

	/** Base URLs and topic prefix of the integration credential. */
	async integrationSettings(itemIndex = 0): Promise<IntegrationSettings> {
		const { data } = await this.read(this.requireIntegration(itemIndex));
		return {
			apiBaseUrl: normaliseApiBaseUrl(String(data.baseUrl ?? '')),
			webhookBaseUrl: normaliseWebhookBaseUrl(String(data.webhookBaseUrl ?? '')),
			topicPrefix: String(data.topicPrefix ?? '').trim(),
		};
	}

	/** The webhook service address as the credential holds it; fails naming the field when empty. */
	async webhookServiceUrl(itemIndex = 0): Promise<string> {
		const { data } = await this.read(this.requireIntegration(itemIndex));
		const url = String(data.webhookBaseUrl ?? '');
		if (url.trim()) return url;
		const { message, description } = missingWebhookServiceUrlMessage();
		throw transportError(this.ctx.getNode(), message, '(none)', itemIndex, description);
	}

	/** Where a request goes: the portal's, the integration credential's (API or webhook service) or the public base URL. */
	async baseUrlFor(request: ClinicRequest, itemIndex: number): Promise<string> {
		// A base URL typed without https:// (or not a URL at all) is named as such.
		const checked = (url: string, field: string, normalise: (value: string) => string): string => {
			const problem = describeBaseUrlProblem(url, field);
			if (problem) throw transportError(this.ctx.getNode(), problem, '(none)', itemIndex);
			return normalise(url);
		};
		if (request.auth === 'portal') {
			const url = request.portal?.baseUrl ?? (await this.read(PORTAL_CREDENTIAL_TYPE)).data.baseUrl;
			return checked(String(url ?? ''), 'API Base URL', normaliseApiBaseUrl);
		}
		if (!this.integrationType) return checked(this.publicBaseUrl, 'API Base URL', normaliseApiBaseUrl);
		if (request.host === 'webhooks') {
			return checked(await this.webhookServiceUrl(itemIndex), WEBHOOK_SERVICE_URL_FIELD, normaliseWebhookBaseUrl);
		}
		const { data } = await this.read(this.requireIntegration(itemIndex));
		return checked(String(data.baseUrl ?? ''), 'API Base URL', normaliseApiBaseUrl);
	}
}
