/**
 * Accounts and tokens, Doorkeeper-style: opaque random tokens, expiry by expires_in,
 * refresh tokens that rotate (a used refresh token is revoked at once, with the
 * access token it came with; using it again is refused), 2FA accounts whose password
 * grant cannot finish, and the patient portal's phone-verification tokens, which are
 * a separate kind.
 *
 * Every grant starts a chain (a password grant, or a refresh token handed out by the
 * web app); each refresh adds the next pair to it. With `reuseRevokesChain` (off by
 * default, as in Doorkeeper; some OAuth servers do it to catch stolen tokens) a reuse
 * of a used refresh token also revokes every token of its chain, the newest included.
 */
import { randomBytes } from 'node:crypto';

import { DEMO_ACCOUNT_ID, ORGANIZATION_ID } from './store';
import type { TokenKind } from './types';

export interface User {
	username: string;
	password: string;
	twoFactor: boolean;
	accountId: number;
	organizationId: number;
}

interface AccessToken {
	token: string;
	username: string;
	createdMs: number;
	expiresIn: number;
	revoked: boolean;
	refreshToken: string | undefined;
	chain: number;
}

interface RefreshToken {
	token: string;
	username: string;
	revoked: boolean;
	/** Exchanged once already (revoked then too). */
	used: boolean;
	accessToken: string | undefined;
	chain: number;
}

/** What the simulator knows of a refresh token (for assertions; never sent to clients). */
export interface RefreshTokenStatus {
	/** Issued by this simulator. */
	known: boolean;
	/** Can be exchanged now. */
	live: boolean;
	/** The newest refresh token of its chain (the one a client should hold). */
	newest: boolean;
	/** Already exchanged. */
	used: boolean;
}

interface PortalSession {
	token: string;
	countryCode: string;
	phone: string;
}

export interface TokenResponse {
	access_token: string;
	token_type: 'bearer';
	expires_in: number;
	refresh_token: string;
	created_at: number;
}

export const DEMO_ACCOUNT = { username: 'demo@clinic.test', password: 'demo-password' };
export const TWO_FACTOR_ACCOUNT = { username: '2fa@clinic.test', password: 'demo-password' };
export const PORTAL_DEMO = { countryCode: '52', phone: '5512345678', code: '246810' };

/** How long a requested portal code stays usable. */
const PORTAL_CODE_TTL_MS = 10 * 60 * 1000;

const newToken = (): string => randomBytes(32).toString('base64url');

export class Auth {
	readonly users = new Map<string, User>();
	private readonly access = new Map<string, AccessToken>();
	private readonly refresh = new Map<string, RefreshToken>();
	private readonly portal = new Map<string, PortalSession>();
	/** `<country code>:<phone>` -> pending one-time code. */
	private readonly portalCodes = new Map<string, { code: string; expiresMs: number }>();
	/** chain -> its newest refresh token. */
	private readonly chainHeads = new Map<number, string>();
	private chains = 0;
	/** See the file comment. */
	reuseRevokesChain = false;
	/** Refresh grants refused because the token had been used already (reuse). */
	refusedReuses = 0;

	constructor(public lifetimeSeconds: number) {
		this.users.set(DEMO_ACCOUNT.username, {
			...DEMO_ACCOUNT,
			twoFactor: false,
			accountId: DEMO_ACCOUNT_ID,
			organizationId: ORGANIZATION_ID,
		});
		this.users.set(TWO_FACTOR_ACCOUNT.username, {
			...TWO_FACTOR_ACCOUNT,
			twoFactor: true,
			accountId: 1202,
			organizationId: ORGANIZATION_ID,
		});
	}

	/** A new pair; a new chain unless `chain` is given (a refresh). */
	issue(username: string, chain = ++this.chains): TokenResponse {
		const createdMs = Date.now();
		const access: AccessToken = {
			token: newToken(),
			username,
			createdMs,
			expiresIn: this.lifetimeSeconds,
			revoked: false,
			refreshToken: undefined,
			chain,
		};
		const refresh: RefreshToken = {
			token: newToken(),
			username,
			revoked: false,
			used: false,
			accessToken: access.token,
			chain,
		};
		access.refreshToken = refresh.token;
		this.access.set(access.token, access);
		this.refresh.set(refresh.token, refresh);
		this.chainHeads.set(chain, refresh.token);
		return {
			access_token: access.token,
			token_type: 'bearer',
			expires_in: access.expiresIn,
			refresh_token: refresh.token,
			created_at: Math.floor(createdMs / 1000),
		};
	}

	/** A refresh token with no access token, as the web app hands out after 2FA. */
	issueRefreshToken(username: string): string {
		if (!this.users.has(username)) throw new Error(`No simulator account named ${username}`);
		const chain = ++this.chains;
		const refresh: RefreshToken = {
			token: newToken(),
			username,
			revoked: false,
			used: false,
			accessToken: undefined,
			chain,
		};
		this.refresh.set(refresh.token, refresh);
		this.chainHeads.set(chain, refresh.token);
		return refresh.token;
	}

	/**
	 * Consumes a refresh token: revokes it and the access token issued with it, answers
	 * the next pair of its chain; undefined when not usable. A reuse of a used token is
	 * refused (and revokes its whole chain with `reuseRevokesChain`).
	 */
	useRefreshToken(token: string): TokenResponse | undefined {
		const refresh = this.refresh.get(token);
		if (!refresh) return undefined;
		if (refresh.used) {
			this.refusedReuses++;
			if (this.reuseRevokesChain) this.revokeChain(refresh.chain);
			return undefined;
		}
		if (refresh.revoked) return undefined;
		refresh.revoked = true;
		refresh.used = true;
		if (refresh.accessToken) {
			const access = this.access.get(refresh.accessToken);
			if (access) access.revoked = true;
		}
		return this.issue(refresh.username, refresh.chain);
	}

	private revokeChain(chain: number): void {
		for (const access of this.access.values()) if (access.chain === chain) access.revoked = true;
		for (const refresh of this.refresh.values()) if (refresh.chain === chain) refresh.revoked = true;
	}

	refreshTokenStatus(token: string): RefreshTokenStatus {
		const refresh = this.refresh.get(token);
		if (!refresh) return { known: false, live: false, newest: false, used: false };
		return {
			known: true,
			live: !refresh.revoked,
			newest: this.chainHeads.get(refresh.chain) === token,
			used: refresh.used,
		};
	}

	/** The user of a live integration access token. */
	integrationUser(token: string | undefined): User | undefined {
		if (!token) return undefined;
		const access = this.access.get(token);
		if (!access || access.revoked) return undefined;
		if (Date.now() >= access.createdMs + access.expiresIn * 1000) return undefined;
		return this.users.get(access.username);
	}

	portalSession(token: string | undefined): PortalSession | undefined {
		return token ? this.portal.get(token) : undefined;
	}

	classify(token: string): Exclude<TokenKind, 'none'> {
		if (this.integrationUser(token)) return 'integration';
		if (this.portal.has(token)) return 'portal';
		return 'invalid';
	}

	/** Every access, refresh and portal token issued so far (for leak checks). */
	issuedTokens(): string[] {
		return [...this.access.keys(), ...this.refresh.keys(), ...this.portal.keys()];
	}

	revokeAll(): void {
		for (const access of this.access.values()) access.revoked = true;
		for (const refresh of this.refresh.values()) refresh.revoked = true;
	}

	/** Revokes every integration access token; refresh tokens stay usable. */
	revokeAccessTokens(): void {
		for (const access of this.access.values()) access.revoked = true;
	}

	expireAccessTokens(): void {
		for (const access of this.access.values()) access.expiresIn = 0;
	}

	/** Starts phone verification; only the demo phone gets a code that works. */
	requestPortalCode(countryCode: string, phone: string): void {
		if (countryCode === PORTAL_DEMO.countryCode && phone === PORTAL_DEMO.phone) {
			this.portalCodes.set(`${countryCode}:${phone}`, {
				code: PORTAL_DEMO.code,
				expiresMs: Date.now() + PORTAL_CODE_TTL_MS,
			});
		}
	}

	/** Checks a one-time code (single use); answers a portal token or undefined. */
	validatePortalCode(countryCode: string, phone: string, code: string): string | undefined {
		const key = `${countryCode}:${phone}`;
		const pending = this.portalCodes.get(key);
		if (!pending || pending.expiresMs < Date.now() || pending.code !== code) return undefined;
		this.portalCodes.delete(key);
		const token = newToken();
		this.portal.set(token, { token, countryCode, phone });
		return token;
	}
}
