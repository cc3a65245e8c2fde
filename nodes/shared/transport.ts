/**
 * The one request helper of both nodes and both triggers: base URLs, who signs a request,
 * one timeout, one retry after a refused token, bounded waits on Retry-After, and error
 * mapping. Where the token travels is decided by the credential's `authenticate`; when a
 * request may go out is decided by its gate (the action node's scheduler); the
 * integration credential's session (sign-in, a refused token) is `Session`'s.
 */
import { NodeApiError, NodeOperationError, sleep } from 'n8n-workflow';
import type {
	ICredentialsDecrypted,
	IDataObject,
	IHttpRequestOptions,
	INode,
} from 'n8n-workflow';

import { WEBHOOK_SIGNING_KEY, putTokenAside } from '../../credentials/ClinicAuth';
import { TOKEN_PLACEMENT_HEADER } from '../../credentials/ClinicTokenPlacement';
import { CredentialSettings, PORTAL_CREDENTIAL_TYPE } from './credentialSettings';
import type { ClientOptions, ClinicRequest, ClinicResponse } from './requestTypes';
import type { Authentication, Context, IntegrationCredentialType, IntegrationSettings } from './credentialSettings';
import { apiError, isTimeout, networkCode, noAnswerError, signInError } from './errors';
import { Session } from './session';


export const DEFAULT_TIMEOUT_MS = 60_000;
export const MAX_RETRY_WAIT_MS = 30_000;
/** Busy answers retried per request, however short their Retry-After. */
const MAX_BUSY_RETRIES = 10;

/** Sign-in failures thrown on the way: reported as they are, not as network failures. */
const signInErrors = new WeakSet<object>();

/** A Retry-After in ms (seconds or an HTTP date); 1 s when absent or unreadable. */
function retryAfterMs(headers: ClinicResponse['headers']): number {
	const raw = headers['retry-after'];
	const value = String((Array.isArray(raw) ? raw[0] : raw) ?? '');
	const seconds = Number(value);
	if (value.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
	const date = Date.parse(value);
	return Number.isFinite(date) ? Math.max(date - Date.now(), 0) : 1000;
}

/**
 * One client per execution (per delivery, per poll): the credential is decrypted once and
 * handed to n8n with every request, so a new token obtained for one item serves the others.
 */
export class ClinicClient {
	private readonly settings: CredentialSettings;
	private readonly timeoutMs: number;
	private readonly maxRetryWaitMs: number;
	private readonly session: Session;

	constructor(
		private readonly ctx: Context,
		authentication: Authentication,
		private readonly options: ClientOptions = {},
	) {
		this.settings = new CredentialSettings(ctx, authentication, options.publicBaseUrl ?? '', options.readCredentials);
		this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
		this.maxRetryWaitMs = options.maxRetryWaitMs ?? MAX_RETRY_WAIT_MS;
		this.session = new Session(ctx, this.settings);
	}

	/** Base URLs and topic prefix of the integration credential. */
	async integrationSettings(itemIndex = 0): Promise<IntegrationSettings> {
		return await this.settings.integrationSettings(itemIndex);
	}

	/** The webhook service address as the credential holds it; fails naming the field when empty. */
	async webhookServiceUrl(itemIndex = 0): Promise<string> {
		return await this.settings.webhookServiceUrl(itemIndex);
	}

	async request<T = IDataObject>(request: ClinicRequest, itemIndex = 0): Promise<T> {
		return (await this.requestFull<T>(request, itemIndex)).body;
	}

	/** Sends a request and returns status, headers and body (bytes when `binary`). */
	async requestFull<T = unknown>(request: ClinicRequest, itemIndex = 0): Promise<ClinicResponse<T>> {
		const base = await this.settings.baseUrlFor(request, itemIndex);
		const host = new URL(base).host;
		const node = this.ctx.getNode();
		let signedInAgain = false;
		let waitedMs = 0;
		let busyRetries = 0;
		let waitingOutBusy = false;
		for (let retry = false; ; retry = true) {
			const askedAt = Date.now();
			const release = (await this.options.gate?.acquire(itemIndex, host, retry)) ?? (() => undefined);
			// The wait a refused request really had in the gate: its own Retry-After, or a longer
			// pause another request's refusal put on the host meanwhile.
			if (waitingOutBusy && this.options.gate) waitedMs += Date.now() - askedAt;
			waitingOutBusy = false;
			let answer: { response: ClinicResponse; sentToken: string };
			try {
				answer = await this.send(request, `${base}${request.path}`, itemIndex);
			} catch (error) {
				const code = networkCode(error);
				release({ timedOut: isTimeout(code) });
				const { operation } = this.options;
				// Only a failure with a network code is "could not reach"; a refused sign-in, or
				// anything else (a credential n8n cannot decrypt, a setting), reaches the user as it is.
				throw signInErrors.has(error as object) || !code
					? asNodeError(node, error, itemIndex)
					: noAnswerError(node, { code, host, itemIndex, timeoutMs: this.timeoutMs, operation, subject: request.subject, write: request.method !== 'GET' });
			}
			const { response, sentToken } = answer;
			const status = response.statusCode;
			const busy = status === 429 || (status === 503 && response.headers['retry-after'] !== undefined);
			const waitMs = busy ? retryAfterMs(response.headers) : 0;
			release({ status, retryAfterMs: waitMs });
			if (status === 401 && request.auth === 'integration' && !signedInAgain) {
				signedInAgain = true;
				await this.session.afterRefusedToken(sentToken);
				continue;
			}
			// What the request will wait: its own Retry-After, or the gate's pause for the host if longer.
			const waitAheadMs = busy ? Math.max(waitMs, this.options.gate?.pausedMs(host) ?? 0) : 0;
			if (busy && waitedMs + waitAheadMs <= this.maxRetryWaitMs && ++busyRetries <= MAX_BUSY_RETRIES) {
				waitingOutBusy = true;
				if (!this.options.gate) {
					waitedMs += waitMs;
					await sleep(waitMs);
				}
				continue;
			}
			if (status >= 400) {
				throw apiError(node, {
					statusCode: status,
					body: request.binary ? Buffer.from(response.body as Buffer).toString('utf8') : response.body,
					subject: request.subject,
					itemIndex,
					afterSignIn: signedInAgain,
					retryAfterSeconds: busy ? Math.ceil(waitMs / 1000) : undefined,
					maxRetryWaitSeconds: this.maxRetryWaitMs / 1000,
				});
			}
			return response as ClinicResponse<T>;
		}
	}

	/** Sends once through n8n; also says which access token the request carried (for the 401 retry). */
	private async send(request: ClinicRequest, url: string, itemIndex: number): Promise<{ response: ClinicResponse; sentToken: string }> {
		const headers: IDataObject = { Accept: request.binary ? '*/*' : 'application/json' };
		const options: IHttpRequestOptions = {
			method: request.method,
			url,
			qs: request.qs,
			body: request.body,
			json: !request.binary,
			headers,
			timeout: this.timeoutMs,
			returnFullResponse: true,
			// Status codes are read above: the 401 retry, Retry-After, error messages.
			ignoreHttpStatusErrors: true,
			...(request.binary ? { encoding: 'arraybuffer' as const } : {}),
		};
		if (request.auth === 'none' || request.portal) {
			if (request.portal) headers.Authorization = `Bearer ${request.portal.token}`;
			return { response: (await this.ctx.helpers.httpRequest(options)) as ClinicResponse, sentToken: '' };
		}
		const type = request.auth === 'portal' ? PORTAL_CREDENTIAL_TYPE : this.settings.requireIntegration(itemIndex);
		const { data, decrypted } = await this.settings.read(type);
		if (request.auth === 'portal') return { response: await this.sendSigned(type, options, decrypted, false), sentToken: '' };
		headers[TOKEN_PLACEMENT_HEADER] = request.tokenPlacement ?? (request.host === 'webhooks' && request.method !== 'GET' ? 'body' : 'header');
		return await this.session.send(
			type as IntegrationCredentialType,
			data,
			async () => await this.sendSigned(type, options, decrypted, request.bodyOnGet === true),
			(message) => this.signInFailed(message, url, itemIndex),
		);
	}

	private signInFailed(message: string, url: string, itemIndex: number): Error {
		const error = signInError(this.ctx.getNode(), message, new URL(url).host, itemIndex);
		signInErrors.add(error);
		return error;
	}

	/**
	 * n8n's `httpRequest` helpers drop the body of every GET; its legacy
	 * `requestWithAuthentication` keeps it. That one takes its own option names and asks the
	 * credential for a new token after any failure (the credential refuses while the token
	 * is valid, see `signIn`).
	 */
	private async sendSigned(type: string, options: IHttpRequestOptions, decrypted: ICredentialsDecrypted, bodyOnGet: boolean): Promise<ClinicResponse> {
		const body = options.body as IDataObject | undefined;
		const additional = { credentialsDecrypted: decrypted };
		if (!(bodyOnGet && options.method === 'GET' && body && Object.keys(body).length > 0)) {
			return (await this.ctx.helpers.httpRequestWithAuthentication.call(this.ctx, type, options, additional)) as ClinicResponse;
		}
		const legacy = {
			method: 'GET',
			uri: options.url,
			qs: options.qs,
			body,
			json: true,
			headers: options.headers,
			timeout: options.timeout,
			resolveWithFullResponse: true,
			simple: false,
		};
		const response = (await this.ctx.helpers.requestWithAuthentication.call(this.ctx, type, legacy as never, additional)) as ClinicResponse;
		return { statusCode: response.statusCode, headers: response.headers, body: response.body };
	}

	/**
	 * The credential's key for the Clinic Trigger's subscription secrets. A credential saved
	 * before the key existed gets one on its next sign-in: with `ensure`, the token is set
	 * aside so that the next request signs in.
	 */
	async webhookSigningKey(options: { ensure?: boolean } = {}): Promise<string> {
		const { data } = await this.settings.read(this.settings.requireIntegration(0));
		const key = String(data[WEBHOOK_SIGNING_KEY] ?? '');
		if (!key && options.ensure) putTokenAside(data);
		return key;
	}
}

/** The node's "Authentication" choice: which credential its requests use. */
export function authenticationOf(ctx: Context): Authentication {
	// An action node's parameters are read per item; the choice is the same for every item.
	const value = 'getInputData' in ctx ? ctx.getNodeParameter('authentication', 0, 'clinicApi') : ctx.getNodeParameter('authentication', 'clinicApi');
	return value as Authentication;
}

/** The client for the credential the node's "Authentication" names. */
export function clientFor(ctx: Context, options?: ClientOptions): ClinicClient {
	return new ClinicClient(ctx, authenticationOf(ctx), options);
}

/** An error as n8n shows it: n8n's own error types as they are, anything else wrapped. */
function asNodeError(node: INode, error: unknown, itemIndex: number): NodeApiError | NodeOperationError {
	return error instanceof NodeApiError || error instanceof NodeOperationError ? error : new NodeOperationError(node, error as Error, { itemIndex });
}
