/**
 * The one request helper of both nodes: base URLs, which credential signs a request,
 * one retry after a refused token, Retry-After on 429, and error mapping.
 * Where the token travels is decided by the credential's `authenticate`.
 */
import { sleep } from 'n8n-workflow';
import type {
	IAdditionalCredentialOptions,
	ICredentialDataDecryptedObject,
	ICredentialsDecrypted,
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IPollFunctions,
	IWebhookFunctions,
} from 'n8n-workflow';

import {
	STALE_TOKEN_KEY,
	TOKEN_PLACEMENT_HEADER,
	WEBHOOK_SIGNING_KEY,
	passwordSessionFingerprint,
	refreshSessionFingerprint,
	forgetSignInFailure,
	readStoreBeforePassword,
	refreshTokenOf,
	sessionNeedsNewToken,
	signInFailureOf,
} from '../../credentials/ClinicAuth';
import type { TokenPlacement } from '../../credentials/ClinicAuth';
import { apiError, networkFailureWords, signInError, transportError } from './errors';
import { limiterFor, outcomeOfStatus } from './hostLimiter';
import type { AcquireOptions } from './hostLimiter';
import {
	WEBHOOK_SERVICE_URL_FIELD,
	describeBaseUrlProblem,
	missingWebhookServiceUrlMessage,
	normaliseApiBaseUrl,
	normaliseWebhookBaseUrl,
} from './urls';

export type IntegrationCredentialType = 'clinicApi' | 'clinicRefreshTokenApi';
export type Authentication = IntegrationCredentialType | 'none';
export const PORTAL_CREDENTIAL_TYPE = 'clinicPatientPortalApi';

/** `data` is the very object n8n updates in place when it signs in again. */
interface DecryptedCredential {
	data: ICredentialDataDecryptedObject;
	decrypted: ICredentialsDecrypted;
}

type Context = IExecuteFunctions | IHookFunctions | IWebhookFunctions | ILoadOptionsFunctions | IPollFunctions;

export interface ClinicRequest {
	/** Main API (base ends in /api/v1) or the separate webhook service. */
	host?: 'api' | 'webhooks';
	method: IHttpRequestMethods;
	/** Path relative to the host's base, e.g. `/people/12`. */
	path: string;
	qs?: IDataObject;
	body?: IDataObject;
	/** Who signs the request: the integration credential, the portal token, or nobody. */
	auth: 'integration' | 'portal' | 'none';
	/** Answer as bytes (file downloads). */
	binary?: boolean;
	/** What the request is about, for error messages: "Invoice 42". */
	subject?: string;
	/** Where the token travels when the usual rule (below) does not say: the CFDI downloads' query. */
	tokenPlacement?: TokenPlacement;
	/** Send `body` on a GET too (GET /events takes its parameters in a JSON body). Signed requests only. */
	bodyOnGet?: boolean;
}

/**
 * The service's rule for where the integration token travels: in the JSON body of
 * webhook-service writes, as a bearer header everywhere else, unless the request says.
 */
function tokenPlacementOf(request: ClinicRequest): TokenPlacement {
	if (request.tokenPlacement) return request.tokenPlacement;
	return request.host === 'webhooks' && request.method !== 'GET' ? 'body' : 'header';
}

export interface ClinicResponse<T = unknown> {
	statusCode: number;
	headers: Record<string, string | string[] | undefined>;
	body: T;
}

export interface IntegrationSettings {
	apiBaseUrl: string;
	webhookBaseUrl: string;
	topicPrefix: string;
}

const MAX_RATE_LIMIT_WAITS = 3;
/** A request without an answer after this long fails with "did not answer in time". */
export const REQUEST_TIMEOUT_MS = 60_000;
/** How long another process may take to save a renewed session after the service issued it. */
const STORE_SETTLE_MS = 1000;
const MAX_RETRY_AFTER_SECONDS = 60;
/** How often what waits for a sign-in (a request, the reading ahead) looks whether the token is there. */
export const SIGN_IN_POLL_MS = 5;

const fingerprintOf: Record<IntegrationCredentialType, (c: ICredentialDataDecryptedObject) => string> = {
	clinicApi: passwordSessionFingerprint,
	clinicRefreshTokenApi: refreshSessionFingerprint,
};

function retryAfterMs(headers: ClinicResponse['headers']): number {
	const raw = headers['retry-after'];
	const value = Array.isArray(raw) ? raw[0] : raw;
	const seconds = Number(value);
	if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, MAX_RETRY_AFTER_SECONDS) * 1000;
	const date = Date.parse(String(value ?? ''));
	if (Number.isFinite(date)) return Math.min(Math.max(date - Date.now(), 0), MAX_RETRY_AFTER_SECONDS * 1000);
	return 1000;
}

/**
 * One client per execution: the credential is decrypted once and handed to n8n with every
 * request, so a new token obtained for one item serves all the others.
 */
export class ClinicClient {
	private readonly decrypted = new Map<string, Promise<DecryptedCredential>>();

	/** Credential data read so far, by type: the objects n8n updates when it signs in. */
	private readonly loaded = new Map<string, ICredentialDataDecryptedObject>();

	/** Why the integration sign-in failed in this execution, if it did. */
	private signInFailure = '';

	/** Settles when the request n8n is signing in for has its answer (or failed). */
	private signInUnderWay?: Promise<void>;

	/** Reads of the stored credential under way, by the access token they replace. */
	private readonly adopting = new Map<string, Promise<boolean>>();

	constructor(
		private readonly ctx: Context,
		private readonly authentication: Authentication,
		/** Base URL for public operations run without a credential. */
		private readonly publicBaseUrl = '',
		/** Waits until the item may send (the action node's "Parallel Requests"). */
		private readonly waitForTurn?: (itemIndex: number) => Promise<void>,
		/** Requests wait for the process-wide limiter of their host (the action node). */
		private readonly hostLimit?: Omit<AcquireOptions, 'retry'>,
	) {}

	get integrationType(): IntegrationCredentialType | undefined {
		return this.authentication === 'none' ? undefined : this.authentication;
	}

	private async credentials(type: string): Promise<DecryptedCredential> {
		let pending = this.decrypted.get(type);
		if (!pending) {
			pending = (async () => {
				const data = await this.ctx.getCredentials(type);
				const reference = this.ctx.getNode().credentials?.[type];
				const copy = { ...data };
				readStoreBeforePassword(copy);
				this.loaded.set(type, copy);
				return { data: copy, decrypted: { id: reference?.id ?? '', name: reference?.name ?? type, type, data: copy } };
			})();
			this.decrypted.set(type, pending);
			pending.catch(() => this.decrypted.delete(type));
		}
		return await pending;
	}

	/**
	 * The integration credential is being read, or n8n is signing in with it and storing the
	 * new token (n8n puts the token into this execution's copy once it is stored).
	 */
	get signingIn(): boolean {
		const type = this.integrationType;
		if (!type || !this.decrypted.has(type)) return false;
		return !this.loaded.get(type)?.accessToken && !this.signInFailure;
	}

	/**
	 * One request has n8n sign in; the others wait for its token, so that n8n stores the new
	 * session once instead of once per request. n8n says nothing when the token is in place,
	 * before that request goes out, so the others look. Returns, for the request that is to
	 * sign in, what to call once it has its answer.
	 */
	private async signInTurn(): Promise<(() => void) | undefined> {
		while (this.signInUnderWay && this.signingIn) await Promise.race([this.signInUnderWay, sleep(SIGN_IN_POLL_MS)]);
		// No await between the look and taking the turn: two requests cannot both take it.
		if (!this.signingIn) return undefined;
		let done!: () => void;
		const underWay = new Promise<void>((resolve) => (done = resolve));
		this.signInUnderWay = underWay;
		return () => {
			if (this.signInUnderWay === underWay) this.signInUnderWay = undefined;
			done();
		};
	}

	private requireIntegration(itemIndex: number): IntegrationCredentialType {
		if (!this.integrationType) {
			throw transportError(
				this.ctx.getNode(),
				'This operation needs a Clinic credential: set "Authentication" to Password or Refresh Token and pick a credential',
				'(none)',
				itemIndex,
			);
		}
		return this.integrationType;
	}

	/** Base URLs and topic prefix of the integration credential. */
	async integrationSettings(itemIndex = 0): Promise<IntegrationSettings> {
		const type = this.requireIntegration(itemIndex);
		const { data } = await this.credentials(type);
		return {
			apiBaseUrl: normaliseApiBaseUrl(String(data.baseUrl ?? '')),
			webhookBaseUrl: normaliseWebhookBaseUrl(String(data.webhookBaseUrl ?? '')),
			topicPrefix: String(data.topicPrefix ?? '').trim(),
		};
	}

	private async baseUrl(request: ClinicRequest, itemIndex: number): Promise<string> {
		const node = this.ctx.getNode();
		// A base URL the user typed without https:// (or not a URL at all) is named as such,
		// instead of ending in a bare "Invalid URL".
		const checked = (url: string, field: string, normalise: (value: string) => string): string => {
			const problem = describeBaseUrlProblem(url, field);
			if (problem) throw transportError(node, problem, '(none)', itemIndex);
			return normalise(url);
		};
		if (request.auth === 'portal') {
			const { data } = await this.credentials(PORTAL_CREDENTIAL_TYPE);
			return checked(String(data.baseUrl ?? ''), 'API Base URL', normaliseApiBaseUrl);
		}
		if (request.auth === 'none' && !this.integrationType) {
			return checked(this.publicBaseUrl, 'API Base URL', normaliseApiBaseUrl);
		}
		const type = this.requireIntegration(itemIndex);
		const { data } = await this.credentials(type);
		if (request.host === 'webhooks') {
			return checked(await this.webhookServiceUrl(itemIndex), WEBHOOK_SERVICE_URL_FIELD, normaliseWebhookBaseUrl);
		}
		return checked(String(data.baseUrl ?? ''), 'API Base URL', normaliseApiBaseUrl);
	}

	/**
	 * The webhook service address as the credential holds it (not yet checked as a URL).
	 * Fails saying which credential field to fill when it is empty.
	 */
	async webhookServiceUrl(itemIndex = 0): Promise<string> {
		const { data } = await this.credentials(this.requireIntegration(itemIndex));
		const url = String(data.webhookBaseUrl ?? '');
		if (!url.trim()) {
			const { message, description } = missingWebhookServiceUrlMessage();
			throw transportError(this.ctx.getNode(), message, '(none)', itemIndex, description);
		}
		return url;
	}

	/** Sends a request and returns the parsed body. */
	async request<T = IDataObject>(request: ClinicRequest, itemIndex = 0): Promise<T> {
		return (await this.requestFull<T>(request, itemIndex)).body;
	}

	/** Sends a request and returns status, headers and body (bytes when `binary`). */
	async requestFull<T = unknown>(request: ClinicRequest, itemIndex = 0): Promise<ClinicResponse<T>> {
		await this.waitForTurn?.(itemIndex);
		const base = await this.baseUrl(request, itemIndex);
		const options: IHttpRequestOptions = {
			method: request.method,
			url: `${base}${request.path}`,
			qs: request.qs,
			body: request.body,
			json: !request.binary,
			headers: {
				Accept: request.binary ? '*/*' : 'application/json',
				...(request.auth === 'integration' ? { [TOKEN_PLACEMENT_HEADER]: tokenPlacementOf(request) } : {}),
			},
			timeout: REQUEST_TIMEOUT_MS,
			returnFullResponse: true,
			// Status codes are ours to read: the 401 retry and error messages happen below.
			ignoreHttpStatusErrors: true,
			...(request.binary ? { encoding: 'arraybuffer' as const } : {}),
		};
		const host = new URL(base).host;

		const limiter = this.hostLimit ? limiterFor(host) : undefined;

		let refreshedAfter401 = false;
		for (let rateLimitWaits = 0; ; ) {
			// Before taking a place in the limiter: waiting for a token is not a request in flight.
			const signedIn = request.auth === 'integration' ? await this.signInTurn() : undefined;
			const permit = await limiter?.acquire({ ...this.hostLimit!, retry: rateLimitWaits > 0 });
			const { response, sentToken } = await this.send(request, options, itemIndex, host)
				.catch(async (error: Error) => {
					// send() words a timeout this way; a timeout is a sign of overload too.
					permit?.release(error.message?.includes(networkFailureWords('ETIMEDOUT')) ? 'overloaded' : 'neutral');
					return await Promise.reject(error);
				})
				.finally(() => signedIn?.());
			const busy = response.statusCode === 429 || (response.statusCode === 503 && response.headers['retry-after'] !== undefined);
			// Paused before the permit passes on, so that no waiting request slips out first.
			if (busy) limiter?.pause(retryAfterMs(response.headers));
			permit?.release(outcomeOfStatus(response.statusCode));
			if (response.statusCode === 401 && request.auth === 'integration' && !refreshedAfter401) {
				refreshedAfter401 = true;
				await this.forgetAccessToken(sentToken);
				continue;
			}
			if (response.statusCode === 429 && rateLimitWaits < MAX_RATE_LIMIT_WAITS) {
				rateLimitWaits++;
				// With the limiter, every request to the host waits (paused above), not only this one.
				if (!limiter) await sleep(retryAfterMs(response.headers));
				continue;
			}
			if (response.statusCode >= 400) {
				throw apiError(this.ctx.getNode(), {
					statusCode: response.statusCode,
					body: request.binary ? Buffer.from(response.body as unknown as Buffer).toString('utf8') : response.body,
					subject: request.subject,
					itemIndex,
					afterSignIn: refreshedAfter401,
				});
			}
			return response as ClinicResponse<T>;
		}
	}

	/**
	 * Sets a refused or expired token aside so the credential's preAuthentication runs on
	 * the next request, unless n8n's store already holds a newer session: in queue mode
	 * another process may have renewed the token (and, for a refresh-token chain, revoked
	 * ours), and the store, not this process's copy, is the truth. A refusal that arrives
	 * after another request already replaced that token changes nothing.
	 */
	private async forgetAccessToken(refusedToken: string): Promise<void> {
		const type = this.integrationType;
		if (!type) return;
		const { data } = await this.credentials(type);
		if (data.accessToken !== refusedToken) return;
		let adopting = this.adopting.get(refusedToken);
		if (!adopting) {
			adopting = this.adoptStoredSession(type, data, refusedToken);
			this.adopting.set(refusedToken, adopting);
		}
		await adopting;
	}

	/** Reads the stored credential into this execution's copy; true when it holds a usable, other token. */
	private async adoptStoredSession(
		type: IntegrationCredentialType,
		data: ICredentialDataDecryptedObject,
		refusedToken: string,
	): Promise<boolean> {
		const stored = await this.ctx.getCredentials(type);
		Object.assign(data, stored);
		const token = String(data.accessToken ?? '');
		if (token && token !== refusedToken && !sessionNeedsNewToken(data, fingerprintOf[type](data))) return true;
		if (token) data[STALE_TOKEN_KEY] = token;
		data.accessToken = '';
		return false;
	}

	/**
	 * After the service refused a refresh token: if n8n's store holds another refresh token
	 * or a usable access token (another process rotated the chain), takes it. The other
	 * process saves its new pair just after the service answered it, so one more look
	 * follows a short wait. True when something newer was found.
	 */
	private async adoptAfterRefusedRefresh(
		type: IntegrationCredentialType,
		data: ICredentialDataDecryptedObject,
		refusedRefreshToken: string,
	): Promise<boolean> {
		const refusedAccessToken = String(data[STALE_TOKEN_KEY] ?? data.accessToken ?? '');
		for (let look = 0; look < 2; look++) {
			if (look > 0) await sleep(STORE_SETTLE_MS);
			const usable = await this.adoptStoredSession(type, data, refusedAccessToken);
			if (usable || refreshTokenOf(data) !== refusedRefreshToken) return true;
		}
		return false;
	}

	/** Sends once; also says which access token the request carried (for the 401 retry). */
	private async send(
		request: ClinicRequest,
		options: IHttpRequestOptions,
		itemIndex: number,
		host: string,
	): Promise<{ response: ClinicResponse; sentToken: string }> {
		const node = this.ctx.getNode();
		if (request.auth === 'integration' && this.signInFailure) {
			// One refused sign-in per execution: repeating it per item could lock the account.
			throw signInError(node, this.signInFailure, host, itemIndex);
		}
		if (request.auth === 'none') {
			try {
				return { response: (await this.ctx.helpers.httpRequest({ ...options })) as ClinicResponse, sentToken: '' };
			} catch (error) {
				throw transportError(node, unreachable(error), host, itemIndex);
			}
		}
		const type = request.auth === 'portal' ? PORTAL_CREDENTIAL_TYPE : this.requireIntegration(itemIndex);
		const { data, decrypted: credentialsDecrypted } = await this.credentials(type);
		for (let attempt = 0; ; attempt++) {
			if (request.auth === 'integration') {
				const fingerprint = fingerprintOf[type as IntegrationCredentialType](data);
				if (data.accessToken && sessionNeedsNewToken(data, fingerprint)) {
					await this.forgetAccessToken(String(data.accessToken));
				}
			}
			const tokenBefore = String(data.accessToken ?? '');
			try {
				const response = await this.sendSigned(type, { ...options }, { credentialsDecrypted }, request.bodyOnGet === true);
				// An empty token before the call means n8n signed in for it and stored the new one.
				return { response, sentToken: tokenBefore || String(data.accessToken ?? '') };
			} catch (error) {
				// The credential recorded a failed sign-in against this very data object.
				const failure = request.auth === 'integration' ? signInFailureOf(data) : undefined;
				if (!failure) throw transportError(node, unreachable(error), host, itemIndex);
				if (attempt === 0 && failure.refusedRefreshToken) {
					const newer = await this.adoptAfterRefusedRefresh(type as IntegrationCredentialType, data, failure.refusedRefreshToken);
					// Nothing newer: the password credential signs in with the password instead.
					if (!newer && type === 'clinicApi') data.refreshToken = '';
					if (newer || type === 'clinicApi') {
						// Once, never a loop: the second attempt's failure is final.
						forgetSignInFailure(data);
						continue;
					}
				}
				this.signInFailure = failure.message;
				throw signInError(node, failure.message, host, itemIndex);
			}
		}
	}

	/**
	 * n8n's `httpRequest` helpers delete the body of every GET (n8n-core `httpRequest`,
	 * 1.123 and 2.41: `if (... method === 'GET') delete axiosRequest.data`); the legacy
	 * `requestWithAuthentication` helper sends it (its `parseRequestObject` keeps `body`
	 * for any method and adds `content-type: application/json`). So a GET that must carry
	 * its body goes through the legacy helper, and everything else through the usual one.
	 */
	private async sendSigned(
		type: string,
		options: IHttpRequestOptions,
		additional: IAdditionalCredentialOptions,
		bodyOnGet: boolean,
	): Promise<ClinicResponse> {
		const body = options.body as IDataObject | undefined;
		const getWithBody = bodyOnGet && options.method === 'GET' && !!body && typeof body === 'object' && Object.keys(body).length > 0;
		if (!getWithBody) {
			return (await this.ctx.helpers.httpRequestWithAuthentication.call(this.ctx, type, options, additional)) as ClinicResponse;
		}
		// The legacy helper's own option names (uri, simple, resolveWithFullResponse).
		const legacy = {
			method: 'GET',
			uri: options.url,
			qs: options.qs,
			body,
			json: true,
			headers: options.headers,
			resolveWithFullResponse: true,
			// Status codes are read by requestFull (401 retry, error messages).
			simple: false,
		};
		const response = (await this.ctx.helpers.requestWithAuthentication.call(this.ctx, type, legacy as never, additional)) as ClinicResponse;
		return { statusCode: response.statusCode, headers: response.headers, body: response.body };
	}

	/**
	 * The integration credential's key for the Clinic Trigger's subscription secrets. A
	 * credential saved before the key existed gets one on its next sign-in: with
	 * `ensure`, the stored access token is set aside so that the next request signs in.
	 */
	async webhookSigningKey(options: { ensure?: boolean } = {}): Promise<string> {
		const type = this.requireIntegration(0);
		const { data } = await this.credentials(type);
		const key = String(data[WEBHOOK_SIGNING_KEY] ?? '');
		if (!key && options.ensure && data.accessToken) await this.forgetAccessToken(String(data.accessToken));
		return key;
	}
}

function networkCode(error: unknown): string | undefined {
	const seen = new Set<unknown>();
	for (let current = error; current && typeof current === 'object' && !seen.has(current); ) {
		seen.add(current);
		const record = current as { code?: unknown; cause?: unknown };
		if (typeof record.code === 'string') return record.code;
		current = record.cause;
	}
	return undefined;
}

/**
 * A readable reason for a request that got no HTTP answer. Nothing from the request
 * itself (URL, headers, body) is used: it may hold a token.
 */
function unreachable(error: unknown): string {
	const words = networkFailureWords(networkCode(error));
	const timedOut = words === networkFailureWords('ETIMEDOUT');
	return `Could not reach the clinic service: ${words}${timedOut ? ` (${REQUEST_TIMEOUT_MS / 1000} s)` : ''}`;
}
