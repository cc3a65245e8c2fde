/**
 * A token the service refuses in the middle of a run, through the nodes' transport
 * (nodes/shared/transport.ts, nodes/shared/session.ts) and n8n-core with the Clinic API
 * (password) credential: one new token and one retry, never a loop; a late 401 for a token
 * already replaced starts no second exchange. Every run is also fed to the file's leak check.
 */
import { passwordSessionFingerprint } from '../../credentials/ClinicAuth';
import { ClinicApi } from '../../credentials/ClinicApi.credentials';
import { CredentialStore, runClinicRequests } from '../helpers';
import type { Simulator } from '../simulator';
import { apiCalls, getConsultation, localServer, passwordCredential, tokenCalls, useSimulator } from '../credentials/support';

let sim: Simulator;
const { watch, run } = useSimulator((started) => (sim = started), 'wrong-password-123');

const parameters = { authentication: 'clinicApi', ...getConsultation('1') };

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

test('leak check: no password or token in any output item, error message, description or serialised error', () => {
	expect(watch.recordedCount).toBeGreaterThan(5);
	expect(watch.secretCount).toBeGreaterThan(10);
	expect(watch.leaks()).toEqual([]);
});
