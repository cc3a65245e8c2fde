/**
 * Clinic API (password grant) through n8n-core: preAuthentication with the hidden
 * expirable access token, what n8n saves, refresh with rotation, expiry by expires_in,
 * one refresh and one retry after a refused token, 2FA, fingerprinting, single-flight.
 * Issue 3. Every run is also fed to the file's leak check.
 */
import { passwordSessionFingerprint } from '../../credentials/ClinicAuth';
import { ClinicApi } from '../../credentials/ClinicApi.credentials';
import { ClinicClient } from '../../nodes/shared/transport';
import { CredentialStore, forgetProcessMemory, runClinicNode, runClinicRequests } from '../helpers';
import type { RunClinicNodeResult } from '../helpers';
import { startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import {
	LeakWatch,
	apiCalls,
	closedPortUrl,
	getConsultation,
	htmlServer,
	localServer,
	passwordCredential,
	refreshDirectly,
	tokenCalls,
} from './support';

jest.setTimeout(30_000);

let sim: Simulator;
const watch = new LeakWatch();

beforeAll(async () => {
	sim = await startSimulator();
	watch.secret(sim.demo.password, sim.twoFactor.password, 'wrong-password-123');
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => {
	sim.reset();
	sim.setTokenLifetime(86400);
	forgetProcessMemory();
});

async function run(options: Parameters<typeof runClinicNode>[0]): Promise<RunClinicNodeResult> {
	const result = await runClinicNode(options);
	watch.record(result);
	return result;
}

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

describe('a token revoked during a run', () => {
	test('one new token, one retry, success (the items after it use the new token)', async () => {
		const result = await runClinicRequests({
			authentication: 'clinicApi',
			credentials: { clinicApi: passwordCredential(sim) },
			requests: [{ method: 'GET', path: '/consultations/1', auth: 'integration' }],
			items: 3,
			beforeRequest: (itemIndex) => {
				if (itemIndex === 1) {
					sim.revokeAllTokens();
					sim.clearLog();
				}
			},
		});
		watch.record(result);

		expect(result.error).toBeUndefined();
		expect(result.output?.[0].map((item) => item.json.statusCode)).toEqual([200, 200, 200]);
		// After the revocation: the revoked refresh token is tried once and refused, then one
		// password sign-in gives the one new token.
		expect(tokenCalls(sim).map((entry) => [(entry.body as { grant_type: string }).grant_type, entry.status])).toEqual([
			['refresh_token', 400],
			['password', 200],
		]);
		expect(apiCalls(sim).map((entry) => entry.status)).toEqual([401, 200, 200]);
	});

	test('a token refused again after the new one is not a loop: one retry, then a clear error', async () => {
		let tokens = 0;
		const server = await localServer((req) => {
			if (req.url?.endsWith('/oauth/token')) {
				tokens++;
				return {
					status: 200,
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify({ access_token: `always-refused-${tokens}`, refresh_token: `refresh-${tokens}`, expires_in: 3600, token_type: 'bearer' }),
				};
			}
			return { status: 401, headers: { 'content-type': 'application/json' }, body: '{"error":"Unauthorized"}' };
		});
		try {
			const result = await run({
				parameters,
				credentials: { clinicApi: { baseUrl: server.url, username: 'someone@clinic.test', password: 'wrong-password-123' } },
			});
			watch.secret('always-refused-1', 'always-refused-2', 'refresh-1', 'refresh-2');
			const apiRequests = server.requests.filter((request) => !request.path.endsWith('/oauth/token'));
			expect(apiRequests).toHaveLength(2);
			expect(tokens).toBe(2);
			expect(result.error?.message).toMatch(/refused the credentials \(401\)/);
		} finally {
			await server.close();
		}
	});

	test('a token revoked between runs: the stored token is refused once, then refreshed', async () => {
		const first = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) } });
		sim.revokeAllTokens();
		sim.clearLog();
		// One item after the other: in parallel, each request in flight meets the refusal.
		const oneByOne = { ...parameters, options: { parallelism: 'fixed', parallelRequests: 1 } };
		const second = await run({ parameters: oneByOne, store: first.store, items: [{ json: {} }, { json: {} }, { json: {} }] });

		expect(second.error).toBeUndefined();
		expect(second.output?.[0]).toHaveLength(3);
		expect(sim.tokenRequests('password')).toBe(1);
		expect(sim.tokenRequests('refresh_token')).toBe(1);
		expect(apiCalls(sim).map((entry) => entry.status)).toEqual([401, 200, 200, 200]);
	});
	test('nothing but the credential\'s own fields is written onto its data (n8n 1.x saves that data whole after a sign-in)', async () => {
		const declared = new Set(new ClinicApi().properties.map((property) => property.name));
		const seen: Array<Record<string, unknown>> = [];
		const original = ClinicApi.prototype.preAuthentication;
		const spy = jest.spyOn(ClinicApi.prototype, 'preAuthentication').mockImplementation(async function (this: never, credentials) {
			seen.push(credentials);
			return await original.call(this, credentials);
		});
		try {
			const first = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) } });
			sim.revokeAllTokens();
			const oneByOne = { ...parameters, options: { parallelism: 'fixed', parallelRequests: 1 } };
			const second = await run({ parameters: oneByOne, store: first.store, items: [{ json: {} }, { json: {} }] });
			expect(second.error).toBeUndefined();
			// The revoked token was set aside and n8n signed in anew, with the data the transport handed it.
			expect(seen.length).toBeGreaterThanOrEqual(2);
			for (const data of seen) expect(Object.keys(data).filter((key) => !declared.has(key))).toEqual([]);
			for (const update of first.store.updates) expect(Object.keys(update.data).filter((key) => !declared.has(key))).toEqual([]);
		} finally {
			spy.mockRestore();
		}
	});
});

describe('concurrent requests refused at different times', () => {
	test('a late 401 for the token already replaced does not start a second exchange', async () => {
		// A service whose stored token T0 was revoked. Consultation 2's refusal arrives 300 ms
		// after consultation 1's, when the new token already works.
		let issued = 0;
		const valid = new Set<string>();
		const refreshTokens = new Map<string, string>([['R0', 'T0']]);
		const server = await localServer((req, body) => {
			if (req.url?.endsWith('/oauth/token')) {
				const params = JSON.parse(body || '{}') as { grant_type?: string; refresh_token?: string };
				if (params.grant_type !== 'refresh_token' || !refreshTokens.has(String(params.refresh_token))) {
					return { status: 400, headers: { 'content-type': 'application/json' }, body: '{"error":"invalid_grant"}' };
				}
				valid.delete(refreshTokens.get(String(params.refresh_token)) ?? '');
				refreshTokens.delete(String(params.refresh_token));
				issued++;
				valid.add(`T${issued}`);
				refreshTokens.set(`R${issued}`, `T${issued}`);
				return {
					status: 200,
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify({ access_token: `T${issued}`, refresh_token: `R${issued}`, expires_in: 3600, token_type: 'bearer' }),
				};
			}
			const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
			if (valid.has(token)) return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"consultation":{"id":1}}' };
			return { status: 401, headers: { 'content-type': 'application/json' }, body: '{"error":"Unauthorized"}' };
		}, (req) => (req.url?.endsWith('/consultations/2') && String(req.headers.authorization).endsWith(' T0') ? 300 : 0));
		try {
			const data = { baseUrl: server.url, username: 'someone@clinic.test', password: 'wrong-password-123' };
			const store = new CredentialStore();
			store.add('clinicApi', {
				...data,
				accessToken: 'T0',
				refreshToken: 'R0',
				expiresAt: new Date(Date.now() + 3600_000).toISOString(),
				sessionFingerprint: passwordSessionFingerprint(data),
			});
			const result = await runClinicRequests({
				authentication: 'clinicApi',
				store,
				items: 2,
				concurrent: true,
				requests: (itemIndex) => [{ method: 'GET', path: `/consultations/${itemIndex + 1}`, auth: 'integration' }],
			});
			watch.record(result);
			watch.secret('T0', 'R0', 'T1', 'R1', 'T2', 'R2');
			expect(result.error).toBeUndefined();
			expect(result.output?.[0].map((item) => item.json.statusCode)).toEqual([200, 200]);
			// One refused token, one exchange: the second refusal was for T0 too.
			expect(server.requests.filter((request) => request.path.endsWith('/oauth/token'))).toHaveLength(1);
		} finally {
			await server.close();
		}
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

describe('mistakes in the credential, seen in a node run', () => {
	const texts: Record<string, string> = {};

	afterAll(() => {
		expect(new Set(Object.values(texts)).size).toBe(Object.keys(texts).length);
	});

	function text(result: RunClinicNodeResult): string {
		return `${result.error?.message ?? ''} | ${result.error?.description ?? ''}`;
	}

	test('wrong password', async () => {
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { password: 'wrong-password-123' }) } });
		expect(result.error?.message).toMatch(/refused the username or password/);
		texts.wrongPassword = text(result);
	});

	test('API Base URL typed without https://: the message says so, nothing is sent', async () => {
		const bare = new URL(sim.apiBaseUrl).host;
		sim.clearLog();
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { baseUrl: bare }) } });
		expect(result.error?.message).toBe(`API Base URL "${bare}" has no https:// at the start: enter it as https://${bare}`);
		expect(sim.log).toEqual([]);
		texts.noScheme = text(result);
	});

	test('unreachable host', async () => {
		const baseUrl = await closedPortUrl();
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { baseUrl }) } });
		expect(text(result)).toMatch(/refused the connection|Could not reach the clinic service/);
		expect(result.error?.description).toContain(new URL(baseUrl).host);
		texts.unreachable = text(result);
	});

	test('a proxy\'s 502 page while the service restarts: named with its status, try again (not "change the address")', async () => {
		for (const status of [502, 503, 504]) {
			const gateway = await htmlServer(status);
			try {
				const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { baseUrl: gateway.url }) } });
				expect(result.error?.message).toMatch(new RegExp(`gateway in front of the clinic service answered ${status}`));
				expect(result.error?.message).toMatch(/Try again in a minute/);
				expect(result.error?.message).not.toMatch(/Set the credential's API Base URL/);
			} finally {
				await gateway.close();
			}
		}
	});

	test('a credential n8n cannot decrypt is reported as that, not as "could not reach the clinic service"', async () => {
		// What n8n throws from reading the credential when its encryption key changed.
		const failure = new Error('Credentials could not be decrypted. The likely reason is that a different "encryptionKey" was used to encrypt the data.');
		const load = jest.spyOn(ClinicClient.prototype as unknown as { send: () => Promise<never> }, 'send').mockRejectedValue(failure);
		try {
			const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) } });
			expect(result.error?.message).toMatch(/could not be decrypted/);
			expect(result.error?.message).not.toMatch(/Could not reach/);
		} finally {
			load.mockRestore();
		}
	});

	test('a web page as base URL', async () => {
		const site = await htmlServer();
		try {
			const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { baseUrl: site.url }) } });
			expect(result.error?.message).toMatch(/answered with a web page, not the clinic API/);
			texts.html = text(result);
		} finally {
			await site.close();
		}
	});

	test('the webhook service as base URL', async () => {
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { baseUrl: sim.webhooksBaseUrl }) } });
		expect(result.error?.message).toMatch(/no token endpoint/);
		expect(result.error?.message).toMatch(/webhook service/);
		texts.webhookHost = text(result);
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

describe('single-flight', () => {
	test('25 items with parallel requests: exactly one token request', async () => {
		const items = Array.from({ length: 25 }, () => ({ json: {} }));
		const result = await run({
			parameters: { ...parameters, options: { parallelRequests: 16 } },
			credentials: { clinicApi: passwordCredential(sim) },
			items,
		});
		expect(result.error).toBeUndefined();
		expect(result.output?.[0]).toHaveLength(25);
		expect(sim.tokenRequests()).toBe(1);
		expect(apiCalls(sim)).toHaveLength(25);
		expect(new Set(apiCalls(sim).map((entry) => entry.tokenKind))).toEqual(new Set(['integration']));
	});

	test('25 items one after the other: exactly one token request', async () => {
		const items = Array.from({ length: 25 }, () => ({ json: {} }));
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) }, items });
		expect(result.error).toBeUndefined();
		expect(sim.tokenRequests()).toBe(1);
	});

	test('two executions at the same time with the same credential: exactly one token request', async () => {
		sim.setLatency(50);
		try {
			const store = new CredentialStore();
			store.add('clinicApi', passwordCredential(sim));
			const items = Array.from({ length: 5 }, () => ({ json: {} }));
			const [a, b] = await Promise.all([
				run({ parameters: { ...parameters, options: { parallelRequests: 5 } }, store, items }),
				run({ parameters: { ...parameters, options: { parallelRequests: 5 } }, store, items }),
			]);
			expect(a.error).toBeUndefined();
			expect(b.error).toBeUndefined();
			expect(sim.tokenRequests()).toBe(1);
			expect(apiCalls(sim)).toHaveLength(10);
		} finally {
			sim.setLatency(0);
		}
	});

	test('many concurrent requests after a revocation: one refresh exchange for all of them', async () => {
		const first = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) } });
		sim.revokeAllTokens();
		sim.clearLog();
		const items = Array.from({ length: 12 }, () => ({ json: {} }));
		const second = await run({ parameters: { ...parameters, options: { parallelRequests: 12 } }, store: first.store, items });
		expect(second.error).toBeUndefined();
		expect(second.output?.[0]).toHaveLength(12);
		expect(sim.tokenRequests('refresh_token')).toBe(1);
		expect(sim.tokenRequests('password')).toBe(1);
	});
});

test('leak check: no password or token in any output item, error message, description or serialised error', () => {
	expect(watch.recordedCount).toBeGreaterThan(20);
	expect(watch.secretCount).toBeGreaterThan(10);
	expect(watch.leaks()).toEqual([]);
});
