/**
 * The service's token endpoint (`POST /oauth/token`): the password and refresh grants,
 * and what each answer means for the user. Used by the credentials' preAuthentication.
 */
import type { IDataObject, IHttpRequestHelper, IHttpRequestOptions } from 'n8n-workflow';

import { networkFailureWords } from './ClinicNetwork';

/** Renew this long before the service's expiry, but never more than a tenth of the lifetime. */
const MAX_RENEWAL_MARGIN_SECONDS = 60;

interface TokenAnswer {
	access_token: string;
	refresh_token?: string;
	expires_in?: number;
	created_at?: number;
}

/** What preAuthentication hands back to n8n to store (strings only). */
export interface StoredSession extends IDataObject {
	accessToken: string;
	expiresAt: string;
	sessionFingerprint: string;
}

interface FullResponse {
	statusCode: number;
	headers: Record<string, string | string[] | undefined>;
	body: unknown;
}

/**
 * When n8n should renew the token: the lifetime from `expires_in`, counted from when the
 * answer arrived here (the service's `created_at` is on its own clock), less a margin.
 */
function renewalTime(answer: TokenAnswer, receivedMs: number): string {
	// No lifetime in the answer: leave it open and rely on the retry after a 401.
	if (typeof answer.expires_in !== 'number' || !Number.isFinite(answer.expires_in)) return '';
	const margin = Math.min(MAX_RENEWAL_MARGIN_SECONDS, answer.expires_in / 10);
	return new Date(receivedMs + (answer.expires_in - margin) * 1000).toISOString();
}

function bodyAsObject(body: unknown): IDataObject | undefined {
	if (body && typeof body === 'object' && !Buffer.isBuffer(body)) return body as IDataObject;
	if (typeof body === 'string') {
		try {
			const parsed = JSON.parse(body);
			return parsed && typeof parsed === 'object' ? (parsed as IDataObject) : undefined;
		} catch {
			return undefined;
		}
	}
	return undefined;
}

function looksLikeHtml(response: FullResponse): boolean {
	const type = String(response.headers['content-type'] ?? '');
	const text = typeof response.body === 'string' ? response.body.trimStart().slice(0, 100).toLowerCase() : '';
	return type.includes('text/html') || text.startsWith('<!doctype html') || text.startsWith('<html');
}

/** The service's own words from an error answer, never echoing anything we sent. */
function serviceWords(body: IDataObject | undefined): string {
	if (!body) return '';
	return [body.error, body.error_description].filter((part) => typeof part === 'string').join(': ');
}

function serviceMessage(body: IDataObject | undefined): string {
	const words = serviceWords(body);
	return words ? ` (${words})` : '';
}

/**
 * A refused sign-in's message says what is wrong and what to do in plain words. The
 * service's own protocol text (`invalid_grant: The provided authorization grant is
 * invalid…`) rides after this mark, for the node error's details (see `signInError`), and
 * never reaches the message a person reads first.
 */
export const SERVICE_WORDS_MARK = '\n\nThe service answered: ';

export function withServiceWords(message: string, words: string): string {
	return words ? `${message}${SERVICE_WORDS_MARK}${words}` : message;
}

/** The plain message and the service's words, split apart again. */
export function splitServiceWords(message: string): { message: string; serviceWords?: string } {
	const at = message.indexOf(SERVICE_WORDS_MARK);
	if (at < 0) return { message };
	return { message: message.slice(0, at), serviceWords: message.slice(at + SERVICE_WORDS_MARK.length) };
}

/** The token endpoint's answer, or the network code when none came back. */
type TokenResponse = { answered: true; response: FullResponse } | { answered: false; code?: string };

async function postToken(
	helper: IHttpRequestHelper,
	baseUrl: string,
	grant: 'password' | 'refresh_token',
	fields: Record<string, string>,
): Promise<TokenResponse> {
	const tokenUrl = `${baseUrl}/oauth/token`;
	const options: IHttpRequestOptions =
		grant === 'password'
			? {
					method: 'POST',
					url: tokenUrl,
					headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
					body: new URLSearchParams({ grant_type: 'password', ...fields }).toString(),
				}
			: {
					method: 'POST',
					url: tokenUrl,
					headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
					body: { grant_type: 'refresh_token', ...fields },
					json: true,
				};
	return await helper.helpers
		.httpRequest({ ...options, returnFullResponse: true, ignoreHttpStatusErrors: true, timeout: 30_000 })
		.then(
			(response): TokenResponse => ({ answered: true, response: response as FullResponse }),
			(error: unknown): TokenResponse => ({
				answered: false,
				code: (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code,
			}),
		);
}

/**
 * Why the sign-in failed. A type of our own, so that whatever n8n wraps it in, the
 * transport can tell a refused sign-in from a network failure (see `signInFailureOf`).
 * It carries our wording only: nothing from the request, so no password or token.
 */
export class ClinicSignInError extends Error {
	readonly clinicSignInFailure = true;

	constructor(
		message: string,
		/** The refresh token the service refused, when that was the failure. */
		readonly refusedRefreshToken = '',
	) {
		super(message);
		this.name = 'ClinicSignInError';
	}
}

export type ExchangeOutcome =
	| { kind: 'token'; answer: TokenAnswer }
	/** detail: the service's own words (`invalid_grant: …`), for support, not for the message. */
	| { kind: 'refused'; status: number; detail: string }
	| { kind: 'twoFactor' };

/** A gateway's error page means the service behind it is down for now, not a wrong address. */
const GATEWAY_FAILURES = new Map([
	[502, 'Bad Gateway'],
	[503, 'Service Unavailable'],
	[504, 'Gateway Timeout'],
]);

/** Runs one grant and classifies the answer; throws only for answers no grant can fix. */
export async function exchange(
	helper: IHttpRequestHelper,
	baseUrl: string,
	grant: 'password' | 'refresh_token',
	fields: Record<string, string>,
): Promise<ExchangeOutcome> {
	const sent = await postToken(helper, baseUrl, grant, fields);
	if (!sent.answered) {
		throw new ClinicSignInError(
			`Could not reach the clinic service at ${baseUrl}: ${networkFailureWords(sent.code)}. Check the credential's API Base URL and that the service is reachable from n8n.`,
		);
	}
	const { response } = sent;
	const body = bodyAsObject(response.body);
	if (response.statusCode >= 200 && response.statusCode < 300 && typeof body?.access_token === 'string') {
		return { kind: 'token', answer: body as unknown as TokenAnswer };
	}
	if (looksLikeHtml(response) && GATEWAY_FAILURES.has(response.statusCode)) {
		throw new ClinicSignInError(
			`A proxy or gateway in front of the clinic service answered ${response.statusCode} (${GATEWAY_FAILURES.get(response.statusCode)}) with a web page: the service is down or restarting. Try again in a minute; the credential is not the problem.`,
		);
	}
	if (looksLikeHtml(response)) {
		throw new ClinicSignInError(
			`The address ${baseUrl} answered with a web page, not the clinic API. Set the credential's API Base URL to the API address you were given, e.g. https://api.example.com/api/v1.`,
		);
	}
	if (response.statusCode === 404) {
		throw new ClinicSignInError(
			`${baseUrl} has no token endpoint (/oauth/token answered 404). Is this the webhook service address? The API Base URL must be the main API; the webhook service has a field of its own.`,
		);
	}
	if (response.statusCode === 403 && body?.token_type === '2fa') return { kind: 'twoFactor' };
	if (response.statusCode === 400 || response.statusCode === 401) {
		return { kind: 'refused', status: response.statusCode, detail: serviceWords(body) };
	}
	throw new ClinicSignInError(
		`The clinic service's token endpoint answered ${response.statusCode}${serviceMessage(body)}. Try again later; if it persists, check the API Base URL.`,
	);
}

export const TWO_FACTOR_MESSAGE =
	'This account uses two-factor verification, so the password sign-in cannot finish (repeating it will not complete the verification). Use the "Clinic Refresh Token API" credential with a refresh token, or an integration account without two-factor verification.';

export function sessionFromAnswer(answer: TokenAnswer, fingerprint: string): StoredSession {
	return {
		accessToken: answer.access_token,
		expiresAt: renewalTime(answer, Date.now()),
		sessionFingerprint: fingerprint,
	};
}
