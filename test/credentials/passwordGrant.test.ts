/**
 * Clinic API (password grant) through n8n-core: preAuthentication with the hidden
 * expirable access token, what n8n saves, refresh with rotation, expiry by expires_in,
 * 2FA, a wrong password, fingerprinting (the other mistakes in the credential are in
 * credentialMistakes.test.ts).
 * Issue 3. Every run is also fed to the file's leak check. The request path's part (a 401
 * mid-run, one sign-in shared by all requests) is in test/shared/retryOn401.test.ts and
 * test/shared/sharedSignIn.test.ts.
 */
import { forgetProcessMemory } from '../helpers';
import type { RunClinicNodeResult } from '../helpers';
import { startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import {
	apiCalls,
	getConsultation,
	passwordCredential,
	refreshDirectly,
	useSimulator,
} from './support';

let sim: Simulator;
const { watch, run } = useSimulator((started) => (sim = started), 'wrong-password-123');

const parameters = { authentication: 'clinicApi', ...getConsultation('1') };

describe('password grant', () => {
	test('stores the access token, the refresh token and the expiry from expires_in', async () => {
		const before = Date.now();
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) } });

		expect(result.error).toBeUndefined();
		expect(result.output?.[0][0].json).toMatchObject({ id: 1 });
		expect(sim.tokenRequests('password')).toBe(1);
		expect(sim.tokenRequests('refresh_token')).toBe(0);

		const saved = result.store.data('clinicApi');
		expect(saved.accessToken).toEqual(expect.any(String));
		expect(saved.refreshToken).toEqual(expect.any(String));
		expect(saved.accessToken).not.toBe('');
		// expiresAt is when n8n renews: the lifetime from expires_in less a 60 s margin.
		const renewAt = Date.parse(String(saved.expiresAt));
		expect(renewAt).toBeGreaterThanOrEqual(before + (86400 - 60) * 1000);
		expect(renewAt).toBeLessThanOrEqual(Date.now() + (86400 - 60) * 1000);
		// The fields the user typed are saved untouched next to the tokens.
		expect(saved).toMatchObject({ username: sim.demo.username, password: sim.demo.password });
		// n8n ran preAuthentication once (the access token was '') and saved its answer.
		expect(result.preAuthenticationCalls).toEqual([expect.objectContaining({ ran: true, saved: true, credentialsExpired: false })]);
		// The request carried that token.
		expect(apiCalls(sim)).toEqual([expect.objectContaining({ path: '/api/v1/consultations/1', tokenPlacement: ['header'], tokenKind: 'integration', status: 200 })]);
	});

	test('the expiry follows the service (a different expires_in gives a different expiry)', async () => {
		sim.setTokenLifetime(7200);
		const before = Date.now();
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) } });
		const after = Date.now();
		const renewAt = Date.parse(String(result.store.data('clinicApi').expiresAt));
		expect(renewAt).toBeGreaterThanOrEqual(before + (7200 - 60) * 1000);
		expect(renewAt).toBeLessThanOrEqual(after + (7200 - 60) * 1000);
	});

	test('the next execution reuses the saved token: no token request', async () => {
		const first = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) } });
		sim.clearLog();
		forgetProcessMemory(); // as after an n8n restart: only the saved data is left
		const second = await run({ parameters, store: first.store });

		expect(second.error).toBeUndefined();
		expect(sim.tokenRequests()).toBe(0);
		expect(second.preAuthenticationCalls).toEqual([expect.objectContaining({ ran: false })]);
		expect(apiCalls(sim)).toEqual([expect.objectContaining({ tokenKind: 'integration', status: 200 })]);
	});
});

describe('refresh with rotation', () => {
	test('a refused access token is replaced with the refresh grant; the new refresh token is saved and the used one is dead', async () => {
		const first = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) } });
		const firstSaved = first.store.data('clinicApi');
		sim.expireAccessTokens();
		sim.clearLog();

		const second = await run({ parameters, store: first.store });

		expect(second.error).toBeUndefined();
		expect(sim.tokenRequests('refresh_token')).toBe(1);
		expect(sim.tokenRequests('password')).toBe(0);
		const saved = second.store.data('clinicApi');
		expect(saved.accessToken).not.toBe(firstSaved.accessToken);
		expect(saved.refreshToken).not.toBe(firstSaved.refreshToken);
		// The service revokes a used refresh token: the old one is refused now.
		expect(await refreshDirectly(sim, String(firstSaved.refreshToken))).toBe(400);
		// One refused request, one retry.
		expect(apiCalls(sim).map((entry) => entry.status)).toEqual([401, 200]);
		// The run after that starts from the rotated pair without any token request.
		sim.clearLog();
		forgetProcessMemory();
		const third = await run({ parameters, store: second.store });
		expect(third.error).toBeUndefined();
		expect(sim.tokenRequests()).toBe(0);
	});
});

describe('expiry by expires_in', () => {
	test('with a 2 s lifetime the next run refreshes before sending: no 401 round trip', async () => {
		sim.setTokenLifetime(2);
		const first = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) } });
		expect(first.error).toBeUndefined();
		const firstSaved = first.store.data('clinicApi');
		expect(Date.parse(String(firstSaved.expiresAt)) - Date.now()).toBeLessThanOrEqual(2000);

		await new Promise((resolve) => setTimeout(resolve, 2100));
		sim.clearLog();
		sim.setTokenLifetime(86400);
		const second = await run({ parameters, store: first.store });

		expect(second.error).toBeUndefined();
		expect(sim.tokenRequests('refresh_token')).toBe(1);
		expect(sim.tokenRequests('password')).toBe(0);
		expect(apiCalls(sim).map((entry) => entry.status)).toEqual([200]);
		// The token request came before the API request.
		expect(sim.log.map((entry) => entry.path)).toEqual(['/api/v1/oauth/token', '/api/v1/consultations/1']);
		expect(second.store.data('clinicApi').refreshToken).not.toBe(firstSaved.refreshToken);
	});
});

describe('short token lifetimes', () => {
	test('a 30 s token serves every item of a run that takes less than that: one token request', async () => {
		// Short, yet far longer than the run on any machine (renewal is due at 27 s).
		sim.setTokenLifetime(30);
		const items = Array.from({ length: 10 }, () => ({ json: {} }));
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) }, items });
		expect(result.error).toBeUndefined();
		// The token is valid for the whole (sub-second) run; renewing it before every request
		// is one token request per item, which issue 3 rules out.
		expect(sim.tokenRequests()).toBe(1);
	});
});

describe('two-factor accounts', () => {
	const twoFactor = () => passwordCredential(sim, { username: sim.twoFactor.username, password: sim.twoFactor.password });

	test('the error says two-factor and points to the refresh-token credential; no retry', async () => {
		const result = await run({ parameters, credentials: { clinicApi: twoFactor() } });

		expect(result.error).toBeDefined();
		const text = `${result.error?.message} ${result.error?.description ?? ''}`;
		expect(text).toMatch(/two-factor/i);
		expect(text).toMatch(/Clinic Refresh Token API/);
		expect(sim.tokenRequests()).toBe(1);
		expect(apiCalls(sim)).toHaveLength(0);
		// Nothing was saved.
		expect(result.store.updates).toHaveLength(0);
	});

	test('25 items: still one password request', async () => {
		const items = Array.from({ length: 25 }, () => ({ json: {} }));
		const result = await run({ parameters: { ...parameters, options: { parallelRequests: 8 } }, credentials: { clinicApi: twoFactor() }, items });
		expect(result.error?.message).toMatch(/two-factor/i);
		expect(sim.tokenRequests()).toBe(1);
	});

	test('with "On Error: Continue" every item reports the 2FA error, but the password is sent once', async () => {
		const items = Array.from({ length: 5 }, () => ({ json: {} }));
		const result = await run({ parameters, credentials: { clinicApi: twoFactor() }, items, continueOnFail: true });
		expect(result.error).toBeUndefined();
		expect(result.output?.[0]).toHaveLength(5);
		for (const item of result.output?.[0] ?? []) expect(String(item.json.error)).toMatch(/two-factor/i);
		// Repeating the password sign-in cannot finish a 2FA login (and may send the user a code each time).
		expect(sim.tokenRequests()).toBe(1);
	});
});

describe('wrong password', () => {
	test('a plain message, one token request, nothing saved; the service\'s OAuth words only in the details', async () => {
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { password: 'wrong-password-123' }) } });
		expect(result.error?.message).toBe('The clinic service refused the username or password. Check both in the Clinic API credential.');
		expect(result.error?.description).not.toMatch(/invalid_grant/);
		// Kept for support in the error's details (what n8n shows under "Error details").
		expect(JSON.stringify((result.error as { errorResponse?: unknown }).errorResponse)).toMatch(/"error":"invalid_grant: /);
		expect(sim.tokenRequests()).toBe(1);
		expect(result.store.updates).toHaveLength(0);
	});

	test('with "On Error: Continue" the wrong password is sent once, not once per item', async () => {
		const items = Array.from({ length: 5 }, () => ({ json: {} }));
		const result = await run({
			parameters,
			credentials: { clinicApi: passwordCredential(sim, { password: 'wrong-password-123' }) },
			items,
			continueOnFail: true,
		});
		expect(result.output?.[0]).toHaveLength(5);
		for (const item of result.output?.[0] ?? []) expect(String(item.json.error)).toMatch(/refused the username or password/);
		// A service locks accounts after repeated failed sign-ins.
		expect(sim.tokenRequests('password')).toBe(1);
	});
});

describe('changed credential fields do not reuse the old session (fingerprint)', () => {
	async function signedIn(): Promise<RunClinicNodeResult> {
		const first = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) } });
		expect(first.error).toBeUndefined();
		sim.clearLog();
		return first;
	}

	test('a changed password signs in again with the new password (and its failure shows)', async () => {
		const first = await signedIn();
		const oldToken = first.store.data('clinicApi').accessToken;
		const second = await run({ parameters, store: first.store, credentials: { clinicApi: { password: 'wrong-password-123' } } });

		expect(second.error?.message).toMatch(/refused the username or password/);
		expect(sim.tokenRequests('password')).toBe(1);
		expect(sim.tokenRequests('refresh_token')).toBe(0);
		expect(apiCalls(sim)).toHaveLength(0);
		// The old session's token stays saved but unused.
		expect(second.store.data('clinicApi').accessToken).toBe(oldToken);
	});

	test('a changed username signs in as that user, not with the old token or refresh token', async () => {
		const first = await signedIn();
		const second = await run({
			parameters,
			store: first.store,
			credentials: { clinicApi: { username: sim.twoFactor.username, password: sim.twoFactor.password } },
		});
		expect(second.error?.message).toMatch(/two-factor/i);
		expect(sim.tokenRequests('password')).toBe(1);
		expect(sim.tokenRequests('refresh_token')).toBe(0);
		expect(apiCalls(sim)).toHaveLength(0);
	});

	test('a changed base URL signs in at the new host; the old token never reaches it', async () => {
		const first = await signedIn();
		const other = await startSimulator();
		try {
			const second = await run({
				parameters,
				store: first.store,
				credentials: { clinicApi: { baseUrl: `${other.apiOrigin}/`, webhookBaseUrl: other.webhooksBaseUrl } },
			});
			expect(second.error).toBeUndefined();
			expect(other.tokenRequests('password')).toBe(1);
			expect(other.tokenRequests('refresh_token')).toBe(0);
			expect(other.log.filter((entry) => !entry.path.endsWith('/oauth/token'))).toEqual([
				expect.objectContaining({ tokenKind: 'integration', status: 200 }),
			]);
			expect(sim.log).toHaveLength(0);
		} finally {
			await other.close();
		}
	});

	test('the same base URL written differently is the same session (no new sign-in)', async () => {
		const first = await signedIn();
		forgetProcessMemory();
		const second = await run({ parameters, store: first.store, credentials: { clinicApi: { baseUrl: `${sim.apiOrigin}/` } } });
		expect(second.error).toBeUndefined();
		expect(sim.tokenRequests()).toBe(0);
	});
});

test('leak check: no password or token in any output item, error message, description or serialised error', () => {
	expect(watch.recordedCount).toBeGreaterThan(20);
	expect(watch.secretCount).toBeGreaterThan(10);
	expect(watch.leaks()).toEqual([]);
});
