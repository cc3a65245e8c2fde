/**
 * The credentials' Test buttons, run as n8n's CredentialsTester runs them (RoutingNode on
 * the type's `test.request`, preAuthentication forced, n8n-core's HTTP client). Good
 * credentials pass; each usual mistake gets its own plain message. Issue 3.
 */
import { forgetProcessMemory, runClinicNode, testCredential } from '../helpers';
import type { TestCredentialResult } from '../helpers';
import { startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import { LeakWatch, apiCalls, closedPortUrl, htmlServer, passwordCredential, tokenCalls } from './support';

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
	forgetProcessMemory();
});

async function test$(type: string, data: Parameters<typeof testCredential>[1], options?: Parameters<typeof testCredential>[2]): Promise<TestCredentialResult> {
	const result = await testCredential(type, data, options);
	// What the editor shows is {status, message}; the error object itself stays in n8n
	// (its debug log), and for a declarative test request n8n-core's error holds the
	// request with its Authorization header, so only the message is checked here.
	watch.record({ message: result.message, store: result.store });
	return result;
}

describe('Clinic API', () => {
	test('good credentials: OK, after a password sign-in and a read with the token on the webhook service', async () => {
		const result = await test$('clinicApi', passwordCredential(sim));
		expect(result).toMatchObject({ status: 'OK', message: 'Connection successful!' });
		expect(sim.log.map((entry) => [entry.method, entry.host, entry.path, entry.tokenPlacement, entry.status])).toEqual([
			['POST', 'api', '/api/v1/oauth/token', [], 200],
			['GET', 'webhooks', '/webhooks', ['header'], 200],
		]);
		expect(result.preAuthenticationCalls).toEqual([expect.objectContaining({ nodeName: 'Temp-Node', ran: true, saved: true })]);
	});

	test.each([
		['the bare host', (s: Simulator) => s.apiOrigin],
		['the bare host with a slash', (s: Simulator) => `${s.apiOrigin}/`],
		['/api/v1 with a slash', (s: Simulator) => `${s.apiBaseUrl}/`],
		['spaces around it', (s: Simulator) => `  ${s.apiBaseUrl}  `],
	])('base URL written as %s: OK', async (_label, baseUrl) => {
		const result = await test$('clinicApi', passwordCredential(sim, { baseUrl: baseUrl(sim) }));
		expect(result).toMatchObject({ status: 'OK' });
		expect(sim.log.map((entry) => entry.path)).toEqual(['/api/v1/oauth/token', '/webhooks']);
	});

	test('without a Webhook Service Base URL the read goes to the API', async () => {
		const result = await test$('clinicApi', passwordCredential(sim, { webhookBaseUrl: '' }));
		expect(result).toMatchObject({ status: 'OK' });
		expect(sim.log.map((entry) => [entry.path, entry.tokenPlacement])).toEqual([
			['/api/v1/oauth/token', []],
			['/api/v1/invoice_item_locations', ['header']],
		]);
	});

	test('a Webhook Service Base URL that does not answer: the Test fails', async () => {
		const result = await test$('clinicApi', passwordCredential(sim, { webhookBaseUrl: await closedPortUrl() }));
		expect(result.status).toBe('Error');
	});

	test('the test signs in anew even when a token is saved, and n8n saves the new session', async () => {
		const first = await test$('clinicApi', passwordCredential(sim));
		const before = first.store.data('clinicApi').accessToken;
		sim.clearLog();
		const second = await test$('clinicApi', passwordCredential(sim), { store: first.store });
		expect(second.status).toBe('OK');
		expect(tokenCalls(sim)).toHaveLength(1);
		expect(second.store.data('clinicApi').accessToken).not.toBe(before);
		// A run afterwards uses what the test saved.
		sim.clearLog();
		forgetProcessMemory();
		const run = await runClinicNode({
			parameters: { authentication: 'clinicApi', resource: 'consultation', operation: 'get', consultationId: '1' },
			store: second.store,
		});
		watch.record(run);
		expect(run.error).toBeUndefined();
		expect(sim.tokenRequests()).toBe(0);
	});

	describe('each mistake has its own plain message', () => {
		const messages: Record<string, string> = {};

		afterAll(() => {
			// Distinct messages: the user can tell the mistakes apart.
			expect(new Set(Object.values(messages)).size).toBe(Object.keys(messages).length);
		});

		test('wrong password', async () => {
			const result = await test$('clinicApi', passwordCredential(sim, { password: 'wrong-password-123' }));
			expect(result.status).toBe('Error');
			expect(result.message).toMatch(/refused the username or password/i);
			expect(result.message).toMatch(/Check both in the Clinic API credential\.$/);
			expect(result.message).not.toMatch(/invalid_grant|authorization grant/);
			expect(apiCalls(sim)).toHaveLength(0);
			messages.wrongPassword = result.message;
		});

		test('two-factor account', async () => {
			const result = await test$('clinicApi', passwordCredential(sim, { username: sim.twoFactor.username, password: sim.twoFactor.password }));
			expect(result.status).toBe('Error');
			expect(result.message).toMatch(/two-factor/i);
			expect(result.message).toMatch(/Clinic Refresh Token API/);
			expect(sim.tokenRequests()).toBe(1);
			messages.twoFactor = result.message;
		});

		test('unreachable host (closed port)', async () => {
			const baseUrl = await closedPortUrl();
			const result = await test$('clinicApi', passwordCredential(sim, { baseUrl }));
			expect(result.status).toBe('Error');
			// n8n's NodeApiError replaces any message that contains "ECONNREFUSED" with its own
			// plain text; the credential's "Could not reach the clinic service at ..." is the other.
			expect(result.message).toMatch(/The service refused the connection|Could not reach the clinic service/);
			expect(apiCalls(sim)).toHaveLength(0);
			messages.unreachable = result.message;
		});

		test('a base URL that is a web page (HTML)', async () => {
			const site = await htmlServer();
			try {
				const result = await test$('clinicApi', passwordCredential(sim, { baseUrl: site.url }));
				expect(result.status).toBe('Error');
				expect(result.message).toMatch(/answered with a web page, not the clinic API/);
				expect(result.message).toMatch(/API Base URL/);
				messages.html = result.message;
			} finally {
				await site.close();
			}
		});

		test('the webhook service address as API base URL', async () => {
			const result = await test$('clinicApi', passwordCredential(sim, { baseUrl: sim.webhooksBaseUrl }));
			expect(result.status).toBe('Error');
			expect(result.message).toMatch(/no token endpoint/);
			expect(result.message).toMatch(/webhook service/);
			// The password went to the webhook host's (missing) token endpoint only.
			expect(sim.log.filter((entry) => entry.host === 'api')).toHaveLength(0);
			messages.webhookHost = result.message;
		});
	});
});

describe('Clinic Refresh Token API', () => {
	test('a pasted refresh token: OK', async () => {
		const refreshToken = sim.issueRefreshToken(sim.twoFactor.username);
		watch.secret(refreshToken);
		const result = await test$('clinicRefreshTokenApi', { baseUrl: sim.apiBaseUrl, refreshToken });
		expect(result).toMatchObject({ status: 'OK', message: 'Connection successful!' });
		expect(tokenCalls(sim)).toEqual([expect.objectContaining({ status: 200 })]);
		expect(sim.tokenRequests('password')).toBe(0);
	});

	test('a dead refresh token: says to paste a new one', async () => {
		const refreshToken = sim.issueRefreshToken(sim.twoFactor.username);
		watch.secret(refreshToken);
		sim.revokeAllTokens();
		const result = await test$('clinicRefreshTokenApi', { baseUrl: sim.apiBaseUrl, refreshToken });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/paste it into the Clinic Refresh Token API credential/);
		expect(sim.tokenRequests()).toBe(1);
	});
});

describe('Clinic Patient Portal API', () => {
	async function portalToken(): Promise<string> {
		const { countryCode, phone, code } = sim.portalDemo;
		const post = (path: string, body: object) =>
			fetch(`${sim.apiBaseUrl}${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
			});
		await (await post('/patient_portal/auth', { country_code: countryCode, phone })).arrayBuffer();
		const answer = (await (await post('/patient_portal/validate', { country_code: countryCode, phone, code })).json()) as { token: string };
		watch.secret(answer.token);
		return answer.token;
	}

	test('a portal token: OK, sent as bearer to the portal endpoint', async () => {
		const token = await portalToken();
		sim.clearLog();
		const result = await test$('clinicPatientPortalApi', { baseUrl: `${sim.apiOrigin}/`, portalToken: token });
		expect(result).toMatchObject({ status: 'OK' });
		expect(sim.log).toEqual([
			expect.objectContaining({ path: '/api/v1/patient_portal/people', tokenPlacement: ['header'], tokenKind: 'portal', status: 200 }),
		]);
	});

	test('a wrong portal token: Error', async () => {
		const result = await test$('clinicPatientPortalApi', { baseUrl: sim.apiBaseUrl, portalToken: 'not-a-portal-token' });
		expect(result.status).toBe('Error');
	});
});

test('leak check: no password or token in any Test button message or error', () => {
	expect(watch.recordedCount).toBeGreaterThan(10);
	expect(watch.leaks()).toEqual([]);
});
