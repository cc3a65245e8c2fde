/**
 * The token exchange and token placement shared by the integration credentials.
 * n8n calls `preAuthentication` when the hidden access token is empty, after a 401,
 * and on the credential's Test button; it saves the keys returned here.
 */
import { createHash, randomBytes } from 'crypto';
import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IHttpRequestHelper,
	IHttpRequestOptions,
} from 'n8n-workflow';

import { networkFailureWords, normaliseApiBaseUrl } from './ClinicNetwork';

/** Renew this long before the service's expiry, but never more than a tenth of the lifetime. */
const MAX_RENEWAL_MARGIN_SECONDS = 60;

interface TokenAnswer {
	access_token: string;
	refresh_token?: string;
	expires_in?: number;
	created_at?: number;
}

interface FullResponse {
	statusCode: number;
	headers: Record<string, string | string[] | undefined>;
	body: unknown;
}

/** What preAuthentication hands back to n8n to store (strings only). */
export interface StoredSession extends IDataObject {
	accessToken: string;
	expiresAt: string;
	sessionFingerprint: string;
}

function sha256(text: string): string {
	return createHash('sha256').update(text).digest('hex');
}

/** A hash of what the session was opened with; a change means the stored tokens are stale. */
export function passwordSessionFingerprint(credentials: ICredentialDataDecryptedObject): string {
	return sha256(
		['password', normaliseApiBaseUrl(String(credentials.baseUrl ?? '')), credentials.username, credentials.password].join('\n'),
	).slice(0, 32);
}

export function refreshSessionFingerprint(credentials: ICredentialDataDecryptedObject): string {
	return sha256(
		['refresh', normaliseApiBaseUrl(String(credentials.baseUrl ?? '')), credentials.refreshToken].join('\n'),
	).slice(0, 32);
}

/** True when the stored access token is missing, past its expiry or from another session. */
export function sessionNeedsNewToken(
	credentials: ICredentialDataDecryptedObject,
	fingerprint: string,
	nowMs = Date.now(),
): boolean {
	if (!credentials.accessToken) return true;
	if (credentials.sessionFingerprint !== fingerprint) return true;
	const renewAt = Date.parse(String(credentials.expiresAt ?? ''));
	return Number.isFinite(renewAt) && renewAt <= nowMs;
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
function serviceMessage(body: IDataObject | undefined): string {
	if (!body) return '';
	const parts = [body.error, body.error_description].filter((part) => typeof part === 'string');
	return parts.length ? ` (${parts.join(': ')})` : '';
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
	| { kind: 'refused'; status: number; detail: string }
	| { kind: 'twoFactor' };

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
		return { kind: 'refused', status: response.statusCode, detail: serviceMessage(body) };
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

/**
 * One exchange per (credential session, stale token), in-process: items and executions can
 * all find the token empty at once, and whoever holds the same stale token shares the
 * result while it is valid. A refresh token works once, so a second exchange would fail.
 * Bounded: the least recently used sessions are forgotten first.
 */
interface Flight {
	staleToken: string;
	result: Promise<IDataObject>;
	settled?: IDataObject;
}
const flights = new Map<string, Flight>();
const FLIGHTS_KEPT = 200;

function stillValid(session: IDataObject | undefined): boolean {
	if (!session) return false;
	const renewAt = Date.parse(String(session.expiresAt ?? ''));
	return !Number.isFinite(renewAt) || renewAt > Date.now();
}

/** The token a caller is replacing: the stored one, or the one the transport set aside. */
export function staleTokenOf(credentials: ICredentialDataDecryptedObject): string {
	return String(credentials.accessToken || credentials[STALE_TOKEN_KEY] || '');
}

/** Key under which the transport keeps a refused token while it asks for a new one. */
export const STALE_TOKEN_KEY = 'staleAccessToken';

async function singleFlight(fingerprint: string, staleToken: string, run: () => Promise<IDataObject>): Promise<IDataObject> {
	const current = flights.get(fingerprint);
	if (current && current.staleToken === staleToken && (!current.settled || stillValid(current.settled))) {
		return await current.result;
	}
	const flight: Flight = { staleToken, result: run() };
	flights.delete(fingerprint);
	flights.set(fingerprint, flight);
	if (flights.size > FLIGHTS_KEPT) flights.delete(flights.keys().next().value as string);
	flight.result.then(
		(session) => (flight.settled = session),
		// A failure is not kept: the next attempt (after the user fixes the credential) runs anew.
		() => flights.get(fingerprint) === flight && flights.delete(fingerprint),
	);
	return await flight.result;
}

/**
 * The request that is to have n8n sign in claims the sign-in for its credential data; the
 * others await `signInUnderWay` instead of asking n8n too, so n8n signs in and stores the
 * session once. The claim settles as soon as the exchange has a session (it is then in the
 * data already) or when the claiming request ends, whichever comes first.
 */
interface Claim {
	promise: Promise<void>;
	settle: () => void;
}
const claims = new WeakMap<object, Claim>();

export function claimSignIn(credentials: object): () => void {
	let settle!: () => void;
	const claim: Claim = { promise: new Promise<void>((resolve) => (settle = resolve)), settle: () => settle() };
	claims.set(credentials, claim);
	return () => settleClaim(credentials, claim);
}

export function signInUnderWay(credentials: object): Promise<void> | undefined {
	return claims.get(credentials)?.promise;
}

function settleClaim(credentials: object, claim = claims.get(credentials)): void {
	if (claims.get(credentials) === claim) claims.delete(credentials);
	claim?.settle();
}

/**
 * Sign-in failures by the credential data object n8n handed to preAuthentication. n8n
 * passes the very object the transport gave it (`credentialsDecrypted.data`) on 1.x and
 * 2.x alike, while the error itself reaches the transport wrapped differently by each
 * version; so the transport asks here instead of reading messages.
 */
export interface SignInFailure {
	message: string;
	/** Set when the service refused this refresh token: another process may hold a newer one. */
	refusedRefreshToken: string;
}

const signInFailures = new WeakMap<object, SignInFailure>();

/** Why signing in with this credential data failed, if it did. */
export function signInFailureOf(credentials: object): SignInFailure | undefined {
	return signInFailures.get(credentials);
}

/**
 * Credential data the nodes' transport handed to n8n. When the service refuses its stored
 * refresh token, the transport first looks in n8n's store for the pair another process
 * (queue mode) rotated to, so the password credential leaves the password sign-in to it.
 */
const readsStoreFirst = new WeakSet<object>();

export function readStoreBeforePassword(credentials: object): void {
	readsStoreFirst.add(credentials);
}

export function leavesPasswordToTransport(credentials: object): boolean {
	return readsStoreFirst.has(credentials);
}

/**
 * Refresh tokens the service refused to this process. The service never takes one back,
 * so none is sent twice: later executions go straight to n8n's store (another process
 * rotated the chain) instead of costing one refused request each.
 */
const refusedRefreshTokens = new Set<string>();
const MAX_REMEMBERED_REFUSALS = 1000;

export function wasRefused(refreshToken: string): boolean {
	return refusedRefreshTokens.has(refreshToken);
}

export function rememberRefused(refreshToken: string): void {
	if (refusedRefreshTokens.size >= MAX_REMEMBERED_REFUSALS) refusedRefreshTokens.clear();
	refusedRefreshTokens.add(refreshToken);
}

/** Clears a recorded failure, once the transport has read a newer session from n8n's store. */
export function forgetSignInFailure(credentials: object): void {
	signInFailures.delete(credentials);
}

/** The refresh token a credential's next refresh would use (hidden rotated one first). */
export function refreshTokenOf(credentials: ICredentialDataDecryptedObject): string {
	return String(credentials.rotatedRefreshToken || credentials.refreshToken || '');
}

/**
 * Runs a credential's token exchange (single-flight), puts the session into the caller's
 * data at once (requests waiting on the claim send with it while n8n stores it), and
 * records a failure against that data.
 */
export async function signIn(
	credentials: ICredentialDataDecryptedObject,
	fingerprint: string,
	run: () => Promise<IDataObject>,
): Promise<IDataObject> {
	// n8n's legacy request helper asks for a new token after any failure, a network one
	// included. A token the transport sent as valid is kept; n8n then reports the failure.
	if (leavesPasswordToTransport(credentials) && credentials.accessToken && !sessionNeedsNewToken(credentials, fingerprint)) {
		return {};
	}
	// The signing key joins the shared result, so concurrent callers all keep the same one.
	const withKey = async () => ({ ...(await run()), ...webhookSigningKeyOf(credentials) });
	try {
		const session = await singleFlight(fingerprint, staleTokenOf(credentials), withKey);
		Object.assign(credentials, session);
		settleClaim(credentials);
		return session;
	} catch (error) {
		// The claim stays: the claiming request may still recover (a newer session in n8n's store).
		const failure =
			error instanceof ClinicSignInError
				? error
				: new ClinicSignInError('Signing in to the clinic service failed. Check the credential and try again.');
		signInFailures.set(credentials, { message: failure.message, refusedRefreshToken: failure.refusedRefreshToken });
		throw failure;
	}
}

/**
 * The key the Clinic Trigger derives its subscription secrets from. It lives only in the
 * encrypted credential; made once, on the first sign-in that finds none, and kept.
 */
export const WEBHOOK_SIGNING_KEY = 'webhookSigningKey';

function webhookSigningKeyOf(credentials: ICredentialDataDecryptedObject): IDataObject {
	const existing = String(credentials[WEBHOOK_SIGNING_KEY] ?? '');
	return { [WEBHOOK_SIGNING_KEY]: existing || randomBytes(32).toString('hex') };
}

/** For tests: forget every cached exchange. */
export function forgetExchanges(): void {
	flights.clear();
	refusedRefreshTokens.clear();
}
