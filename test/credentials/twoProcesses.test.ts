/**
 * Two n8n processes sharing one credentials table (queue mode): each "process" is its own
 * copy of our modules (and of n8n-core), loaded with jest.isolateModules, so nothing held
 * in one process's memory helps the other. The store (n8n's database) is the truth.
 */
import { startSimulator } from '../simulator';
import { Auth } from '../simulator/auth';
import type { Simulator } from '../simulator';
import type { CredentialStore } from '../helpers';
import { passwordCredential, refreshCredential } from './support';

type Helpers = typeof import('../helpers');

function newProcess(): Helpers {
	let loaded: Helpers | undefined;
	jest.isolateModules(() => {
		loaded = require('../helpers') as Helpers;
	});
	return loaded!;
}

let sim: Simulator;
let processA: Helpers;
let processB: Helpers;

beforeAll(async () => {
	sim = await startSimulator();
	processA = newProcess();
	processB = newProcess();
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => {
	sim.reset();
	processA.forgetProcessMemory();
	processB.forgetProcessMemory();
});

const GET_CONSULTATION = [{ method: 'GET' as const, path: '/consultations/1', auth: 'integration' as const }];

/**
 * Process A signs in with a credential the user just saved (a pasted refresh token for the
 * two-factor account, or the password); answers the store n8n saved the session to.
 */
async function signedInByA(type: 'clinicApi' | 'clinicRefreshTokenApi'): Promise<CredentialStore> {
	const data = type === 'clinicApi' ? passwordCredential(sim) : refreshCredential(sim, sim.issueRefreshToken(sim.twoFactor.username));
	const first = await processA.runClinicRequests({ authentication: type, credentials: { [type]: data }, requests: GET_CONSULTATION });
	expect(first.error).toBeUndefined();
	return first.store;
}

/** What the service answers a refresh grant, as another process would receive it. */
async function rotateElsewhere(refreshToken: string): Promise<{ access_token: string; refresh_token: string }> {
	const response = await fetch(`${sim.apiBaseUrl}/oauth/token`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: refreshToken }),
	});
	expect(response.status).toBe(200);
	return (await response.json()) as { access_token: string; refresh_token: string };
}

test('process A renews the token (revoking B\'s): B\'s 401 takes A\'s stored token, no token request in B', async () => {
	const store = await signedInByA('clinicRefreshTokenApi');
	const before = sim.tokenRequests();

	const inB = await processB.runClinicRequests({
		authentication: 'clinicRefreshTokenApi',
		store,
		requests: GET_CONSULTATION,
		items: 2,
		beforeRequest: async (itemIndex) => {
			if (itemIndex !== 1) return;
			// Meanwhile A's token is refused (expired) and A renews it, which revokes B's copy.
			sim.expireAccessTokens();
			const inA = await processA.runClinicRequests({ authentication: 'clinicRefreshTokenApi', store, requests: GET_CONSULTATION });
			expect(inA.error).toBeUndefined();
		},
	});
	expect(inB.error).toBeUndefined();
	expect(inB.output?.[0].map((item) => item.json.statusCode)).toEqual([200, 200]);
	// One token request in all: A's. B read the store instead of refreshing.
	expect(sim.tokenRequests() - before).toBe(1);
});

test.each([
	['as B\'s refresh is refused', 0],
	['2 s after B\'s refresh was refused (a busy database)', 2000],
])('B\'s refresh is refused because A rotated the chain; A saves its pair %s: B takes it, once', async (_when, saveAfterMs) => {
	const store = await signedInByA('clinicRefreshTokenApi');
	const chainHead = String(store.data('clinicRefreshTokenApi').rotatedRefreshToken);
	const before = sim.tokenRequests('refresh_token');
	const useRefreshToken = Auth.prototype.useRefreshToken;
	const refusing = jest.spyOn(Auth.prototype, 'useRefreshToken');

	const inB = await processB
		.runClinicRequests({
			authentication: 'clinicRefreshTokenApi',
			store,
			requests: GET_CONSULTATION,
			items: 2,
			beforeRequest: async (itemIndex) => {
				if (itemIndex !== 1) return;
				sim.expireAccessTokens();
				// A rotates the chain now and saves its new pair only once B's refresh was refused
				// (as the service refuses it, before B has the answer): B must look at the store
				// again after its refusal, not only before.
				const rotated = await rotateElsewhere(chainHead);
				refusing.mockImplementation(function (this: Auth, token: string) {
					const answer = useRefreshToken.call(this, token);
					if (token === chainHead) {
						refusing.mockRestore();
						const save = () =>
							store.edit('clinicRefreshTokenApi', {
								accessToken: rotated.access_token,
								rotatedRefreshToken: rotated.refresh_token,
								expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
							});
						if (saveAfterMs === 0) save();
						else setTimeout(save, saveAfterMs);
					}
					return answer;
				});
			},
		})
		.finally(() => refusing.mockRestore());
	expect(inB.error).toBeUndefined();
	expect(inB.output?.[0].map((item) => item.json.statusCode)).toEqual([200, 200]);
	// A's rotation and B's one refused attempt: B did not loop.
	expect(sim.tokenRequests('refresh_token') - before).toBe(2);
	expect(store.data('clinicRefreshTokenApi').rotatedRefreshToken).not.toBe(chainHead);
});

test('B\'s own newest token of the chain is older than the stored one: B sends only the stored one', async () => {
	const store = await signedInByA('clinicRefreshTokenApi');
	const expiredRun = async (inProcess: Helpers) => {
		sim.expireAccessTokens();
		return await inProcess.runClinicRequests({ authentication: 'clinicRefreshTokenApi', store, requests: GET_CONSULTATION });
	};
	// B renews once (it remembers that token), then A renews after it: the store moved past B's.
	expect((await expiredRun(processB)).error).toBeUndefined();
	expect((await expiredRun(processA)).error).toBeUndefined();
	// A third process rotates the stored token without saving yet: B's refresh is refused.
	await rotateElsewhere(String(store.data('clinicRefreshTokenApi').rotatedRefreshToken));
	const before = sim.tokenRequests('refresh_token');
	const inB = await expiredRun(processB);
	expect(inB.error?.message).toMatch(/refused the refresh token/);
	// The stored token only: B's own older one is spent, and sending it is one more refused reuse.
	expect(sim.tokenRequests('refresh_token') - before).toBe(1);
});

test('nothing newer in the store: the refused refresh token is final, after looking again for a few seconds', async () => {
	const store = await signedInByA('clinicRefreshTokenApi');
	sim.revokeAllTokens();
	const before = sim.tokenRequests('refresh_token');
	const inB = await processB.runClinicRequests({ authentication: 'clinicRefreshTokenApi', store, requests: GET_CONSULTATION, items: 3 });
	expect(inB.error?.message).toMatch(/refused the refresh token[\s\S]*paste it into the Clinic Refresh Token API credential/);
	expect(sim.tokenRequests('refresh_token') - before).toBe(1);
	// The next execution in that process does not send the refused token again.
	const again = await processB.runClinicRequests({ authentication: 'clinicRefreshTokenApi', store, requests: GET_CONSULTATION });
	expect(again.error?.message).toMatch(/refused the refresh token/);
	expect(sim.tokenRequests('refresh_token') - before).toBe(1);
});

test('password credential: B\'s 401 after A signed in anew takes A\'s stored token', async () => {
	const store = await signedInByA('clinicApi');
	const before = sim.tokenRequests();
	const inB = await processB.runClinicRequests({
		authentication: 'clinicApi',
		store,
		requests: GET_CONSULTATION,
		items: 2,
		beforeRequest: async (itemIndex) => {
			if (itemIndex !== 1) return;
			sim.expireAccessTokens();
			const inA = await processA.runClinicRequests({ authentication: 'clinicApi', store, requests: GET_CONSULTATION });
			expect(inA.error).toBeUndefined();
		},
	});
	expect(inB.error).toBeUndefined();
	expect(sim.tokenRequests() - before).toBe(1);
});
