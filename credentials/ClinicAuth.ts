/**
 * Signing in, for the integration credentials and the nodes' transport: one exchange per
 * session at a time, one request at a time having n8n sign in (the claim), and what a
 * failed sign-in leaves for the requests after it. n8n calls `preAuthentication` when the
 * hidden access token is empty, after a 401, and on the Test button; it saves what it returns.
 */
import { createHash, randomBytes } from 'crypto';
import type { ICredentialDataDecryptedObject, IDataObject } from 'n8n-workflow';

import { normaliseApiBaseUrl } from './ClinicNetwork';
import { keepNewest, keptInProcess } from './ClinicProcessMemory';
import { ClinicSignInError } from './ClinicTokenEndpoint';


/** A hash of what the session was opened with; a change means the stored tokens are stale. */
function hashOf(parts: unknown[]): string {
	return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 32);
}

export function passwordSessionFingerprint(credentials: ICredentialDataDecryptedObject): string {
	return hashOf(['password', normaliseApiBaseUrl(String(credentials.baseUrl ?? '')), credentials.username, credentials.password]);
}

export function refreshSessionFingerprint(credentials: ICredentialDataDecryptedObject): string {
	return hashOf(['refresh', normaliseApiBaseUrl(String(credentials.baseUrl ?? '')), credentials.refreshToken]);
}

/** True when the stored access token is missing, past its expiry or from another session. */
export function sessionNeedsNewToken(credentials: ICredentialDataDecryptedObject, fingerprint: string, nowMs = Date.now()): boolean {
	if (!credentials.accessToken || credentials.sessionFingerprint !== fingerprint) return true;
	const renewAt = Date.parse(String(credentials.expiresAt ?? ''));
	return Number.isFinite(renewAt) && renewAt <= nowMs;
}

/**
 * One exchange per (credential session, stale token), in-process: items and executions can
 * all find the token empty at once, and whoever holds the same stale token shares the
 * result while it is valid. A refresh token works once, so a second exchange would fail.
 * Bounded: the least recently used sessions are forgotten first.
 */
interface PendingSignIn {
	staleToken: string;
	result: Promise<IDataObject>;
	settled?: IDataObject;
	/** For callers whose data has no signing key yet: all of them get this one. */
	newSigningKey: string;
}
const PENDING_SIGN_INS_KEPT = 200;
const pendingSignIns = keptInProcess('pending sign-ins', `${PENDING_SIGN_INS_KEPT} credentials`, new Map<string, PendingSignIn>());

function stillValid(session: IDataObject | undefined): boolean {
	if (!session) return false;
	const renewAt = Date.parse(String(session.expiresAt ?? ''));
	return !Number.isFinite(renewAt) || renewAt > Date.now();
}

/**
 * What the nodes' transport and the credential share about one credential data object:
 * the very object the transport hands to n8n, which n8n passes to `preAuthentication`
 * (on 1.x and 2.x alike). The one channel between the two; nothing is written onto the
 * data itself, which n8n may store whole.
 */
interface SessionNote {
	/** The nodes' transport handed this data to n8n (not the Test button, not another node). */
	fromTransport?: boolean;
	/** A request has n8n sign in; the others wait for it. */
	claim?: Claim;
	/** Why signing in with this data failed. */
	failure?: SignInFailure;
	/** The token the transport set aside to have n8n sign in anew. */
	tokenAside?: string;
}
const notes = new WeakMap<object, SessionNote>();

function noteOf(credentials: object): SessionNote {
	let note = notes.get(credentials);
	if (!note) notes.set(credentials, (note = {}));
	return note;
}

/** The token a caller is replacing: the stored one, or the one the transport set aside. */
export function staleTokenOf(credentials: ICredentialDataDecryptedObject): string {
	return String(credentials.accessToken || notes.get(credentials)?.tokenAside || '');
}

/** The token the transport set aside, if it did. */
export function tokenAsideOf(credentials: object): string | undefined {
	return notes.get(credentials)?.tokenAside;
}

/** Sets the token aside so that n8n signs in on the next request; kept to share one exchange. */
export function putTokenAside(credentials: ICredentialDataDecryptedObject): void {
	if (!credentials.accessToken) return;
	noteOf(credentials).tokenAside = String(credentials.accessToken);
	credentials.accessToken = '';
}

async function joinPendingSignIn(fingerprint: string, staleToken: string, run: () => Promise<IDataObject>): Promise<PendingSignIn> {
	const current = pendingSignIns.get(fingerprint);
	if (current && current.staleToken === staleToken && (!current.settled || stillValid(current.settled))) {
		await current.result;
		return current;
	}
	const pending: PendingSignIn = { staleToken, result: run(), newSigningKey: randomBytes(32).toString('hex') };
	keepNewest(pendingSignIns, fingerprint, pending, PENDING_SIGN_INS_KEPT);
	pending.result.then(
		(session) => (pending.settled = session),
		// A failure is not kept: the next attempt (after the user fixes the credential) runs anew.
		() => pendingSignIns.get(fingerprint) === pending && pendingSignIns.delete(fingerprint),
	);
	await pending.result;
	return pending;
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
export function claimSignIn(credentials: object): () => void {
	let settle!: () => void;
	const claim: Claim = { promise: new Promise<void>((resolve) => (settle = resolve)), settle: () => settle() };
	noteOf(credentials).claim = claim;
	return () => settleClaim(credentials, claim);
}

export function signInUnderWay(credentials: object): Promise<void> | undefined {
	return notes.get(credentials)?.claim?.promise;
}

function settleClaim(credentials: object, claim = notes.get(credentials)?.claim): void {
	const note = notes.get(credentials);
	if (note && note.claim === claim) note.claim = undefined;
	claim?.settle();
}

/**
 * Sign-in failures by the credential data object n8n handed to preAuthentication: the very
 * object the transport gave it, on 1.x and 2.x alike (the error itself arrives wrapped).
 */
export interface SignInFailure {
	message: string;
	/** Set when the service refused this refresh token: another process may hold a newer one. */
	refusedRefreshToken: string;
}

/** Why signing in with this credential data failed, if it did. */
export function signInFailureOf(credentials: object): SignInFailure | undefined {
	return notes.get(credentials)?.failure;
}

/**
 * Credential data the nodes' transport handed to n8n. When the service refuses its stored
 * refresh token, the transport first looks in n8n's store for the pair another process
 * (queue mode) rotated to, so the password credential leaves the password sign-in to it.
 */
export function markTransportData(credentials: object): void {
	noteOf(credentials).fromTransport = true;
}

export function isTransportData(credentials: object): boolean {
	return notes.get(credentials)?.fromTransport === true;
}

/** Refresh tokens the service refused: none is sent twice (later executions read n8n's store instead). */
const MAX_REMEMBERED_REFUSALS = 1000;
const refusedRefreshTokens = keptInProcess('refused refresh tokens', `${MAX_REMEMBERED_REFUSALS} tokens`, new Set<string>());

export function wasRefused(refreshToken: string): boolean {
	return refusedRefreshTokens.has(refreshToken);
}

export function rememberRefused(refreshToken: string): void {
	if (refusedRefreshTokens.size >= MAX_REMEMBERED_REFUSALS) refusedRefreshTokens.clear();
	refusedRefreshTokens.add(refreshToken);
}

/** Clears a recorded failure, once the transport has read a newer session from n8n's store. */
export function forgetSignInFailure(credentials: object): void {
	const note = notes.get(credentials);
	if (note) note.failure = undefined;
}

/** The refresh token a credential's next refresh would use (hidden rotated one first). */
export function refreshTokenOf(credentials: ICredentialDataDecryptedObject): string {
	return String(credentials.rotatedRefreshToken || credentials.refreshToken || '');
}

/**
 * Runs a credential's token exchange (one pending sign-in shared by its callers), puts the session into the caller's
 * data at once (requests waiting on the claim send with it while n8n stores it), and
 * records a failure against that data.
 */
export async function signIn(credentials: ICredentialDataDecryptedObject, fingerprint: string, run: () => Promise<IDataObject>): Promise<IDataObject> {
	// n8n's legacy request helper asks for a new token after any failure, a network one
	// included. A token the transport sent as valid is kept; n8n then reports the failure.
	if (isTransportData(credentials) && credentials.accessToken && !sessionNeedsNewToken(credentials, fingerprint)) {
		return {};
	}
	try {
		const signedIn = await joinPendingSignIn(fingerprint, staleTokenOf(credentials), run);
		// Only the session is shared: data keeps its own signing key, and data without one
		// gets the pending sign-in's, so concurrent callers all store the same key.
		const signingKey = String(credentials[WEBHOOK_SIGNING_KEY] || signedIn.newSigningKey);
		const session = { ...(await signedIn.result), [WEBHOOK_SIGNING_KEY]: signingKey };
		Object.assign(credentials, session);
		settleClaim(credentials);
		return session;
	} catch (error) {
		// The claim stays: the claiming request may still recover (a newer session in n8n's store).
		const failure = error instanceof ClinicSignInError ? error : new ClinicSignInError('Signing in to the clinic service failed. Check the credential and try again.');
		noteOf(credentials).failure = { message: failure.message, refusedRefreshToken: failure.refusedRefreshToken };
		throw failure;
	}
}

/**
 * The key the Clinic Trigger derives its subscription secrets from. It lives only in the
 * encrypted credential; made once, on the first sign-in that finds none, and kept.
 */
export const WEBHOOK_SIGNING_KEY = 'webhookSigningKey';
