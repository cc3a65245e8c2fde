/**
 * Clinic Refresh Token API through n8n-core: the refresh grant, every rotated refresh
 * token saved, and a refused refresh that stops with "paste a new refresh token".
 * Issue 3. Every run is also fed to the file's leak check.
 */
import { forgetProcessMemory, runClinicNode, runClinicRequests, testCredential } from '../helpers';
import type { RunClinicNodeResult } from '../helpers';
import type { Simulator } from '../simulator';
import { apiCalls, getConsultation, refreshCredential, refreshDirectly, tokenCalls, useSimulator } from './support';

let sim: Simulator;
const { watch } = useSimulator((started) => (sim = started));

/** What the user pastes: a refresh token of the 2FA account, from the web app. */
function pasted(): string {
	const token = sim.issueRefreshToken(sim.twoFactor.username);
	watch.secret(token);
	return token;
}

async function run(options: Parameters<typeof runClinicNode>[0]): Promise<RunClinicNodeResult> {
	const result = await runClinicNode(options);
	watch.record(result);
	return result;
}

const parameters = { authentication: 'clinicRefreshTokenApi', ...getConsultation('1') };
const PASTE_AGAIN = /refused the refresh token[\s\S]*paste it into the Clinic Refresh Token API credential/;

test('the refresh grant gives the access token; the rotated refresh token is saved and the pasted one is dead', async () => {
	const refreshToken = pasted();
	const before = Date.now();
	const result = await run({ parameters, credentials: { clinicRefreshTokenApi: refreshCredential(sim, refreshToken) } });
	const after = Date.now();

	expect(result.error).toBeUndefined();
	expect(result.output?.[0][0].json).toMatchObject({ id: 1 });
	expect(sim.tokenRequests('refresh_token')).toBe(1);
	expect(sim.tokenRequests('password')).toBe(0);
	const saved = result.store.data('clinicRefreshTokenApi');
	expect(saved.accessToken).toEqual(expect.any(String));
	expect(saved.rotatedRefreshToken).toEqual(expect.any(String));
	expect(saved.rotatedRefreshToken).not.toBe(refreshToken);
	// Renewal time: the lifetime from expires_in less a 60 s margin.
	const renewAt = Date.parse(String(saved.expiresAt));
	expect(renewAt).toBeGreaterThanOrEqual(before + (86400 - 60) * 1000);
	expect(renewAt).toBeLessThanOrEqual(after + (86400 - 60) * 1000);
	// The field the user pasted is left as typed.
	expect(saved.refreshToken).toBe(refreshToken);
	expect(await refreshDirectly(sim, refreshToken)).toBe(400);
	expect(apiCalls(sim)).toEqual([expect.objectContaining({ tokenPlacement: ['header'], tokenKind: 'integration', status: 200 })]);
});

test('each later refresh uses and replaces the saved rotated token', async () => {
	const first = await run({ parameters, credentials: { clinicRefreshTokenApi: refreshCredential(sim, pasted()) } });
	const rotations = [String(first.store.data('clinicRefreshTokenApi').rotatedRefreshToken)];
	for (let round = 0; round < 3; round++) {
		sim.expireAccessTokens();
		sim.clearLog();
		const next = await run({ parameters, store: first.store });
		expect(next.error).toBeUndefined();
		expect(tokenCalls(sim)).toEqual([expect.objectContaining({ status: 200 })]);
		expect(sim.tokenRequests('password')).toBe(0);
		rotations.push(String(next.store.data('clinicRefreshTokenApi').rotatedRefreshToken));
	}
	expect(new Set(rotations).size).toBe(4);
	// Each used refresh token was revoked by the service; only the newest one still works.
	for (const used of rotations.slice(0, -1)) expect(await refreshDirectly(sim, used)).toBe(400);
});

test('the next execution reuses the saved access token: no token request', async () => {
	const first = await run({ parameters, credentials: { clinicRefreshTokenApi: refreshCredential(sim, pasted()) } });
	sim.clearLog();
	forgetProcessMemory();
	const second = await run({ parameters, store: first.store });
	expect(second.error).toBeUndefined();
	expect(sim.tokenRequests()).toBe(0);
});

test('a refused refresh stops: one refresh request, no password, no retry, says to paste a new refresh token', async () => {
	const refreshToken = pasted();
	sim.revokeAllTokens();
	const result = await run({ parameters, credentials: { clinicRefreshTokenApi: refreshCredential(sim, refreshToken) } });

	expect(result.error?.message).toMatch(PASTE_AGAIN);
	expect(sim.tokenRequests('refresh_token')).toBe(1);
	expect(sim.tokenRequests('password')).toBe(0);
	expect(apiCalls(sim)).toHaveLength(0);
	expect(result.store.updates).toHaveLength(0);
});

test('a refused refresh with 10 items: still one refresh request', async () => {
	const refreshToken = pasted();
	sim.revokeAllTokens();
	const items = Array.from({ length: 10 }, () => ({ json: {} }));
	const result = await run({
		parameters: { ...parameters, options: { parallelRequests: 4 } },
		credentials: { clinicRefreshTokenApi: refreshCredential(sim, refreshToken) },
		items,
	});
	expect(result.error?.message).toMatch(PASTE_AGAIN);
	expect(sim.tokenRequests()).toBe(1);
});

test('a refused refresh with "On Error: Continue": every item says so, but the refresh is tried once', async () => {
	const refreshToken = pasted();
	sim.revokeAllTokens();
	const items = Array.from({ length: 5 }, () => ({ json: {} }));
	const result = await run({
		parameters,
		credentials: { clinicRefreshTokenApi: refreshCredential(sim, refreshToken) },
		items,
		continueOnFail: true,
	});
	expect(result.output?.[0]).toHaveLength(5);
	for (const item of result.output?.[0] ?? []) expect(String(item.json.error)).toMatch(PASTE_AGAIN);
	expect(sim.tokenRequests()).toBe(1);
});

test('tokens revoked mid-run: the refused access token leads to one refresh attempt, refused, and the paste-again error', async () => {
	const result = await runClinicRequests({
		authentication: 'clinicRefreshTokenApi',
		credentials: { clinicRefreshTokenApi: refreshCredential(sim, pasted()) },
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
	expect(result.error?.message).toMatch(PASTE_AGAIN);
	expect(sim.tokenRequests('refresh_token')).toBe(1);
	expect(sim.tokenRequests('password')).toBe(0);
	expect(apiCalls(sim).map((entry) => entry.status)).toEqual([401]);
});

test('a new pasted refresh token after a refusal works at once (it is a new session)', async () => {
	const dead = pasted();
	sim.revokeAllTokens();
	const refused = await run({ parameters, credentials: { clinicRefreshTokenApi: refreshCredential(sim, dead) } });
	expect(refused.error?.message).toMatch(PASTE_AGAIN);
	sim.clearLog();
	const fresh = pasted();
	const fixed = await run({ parameters, store: refused.store, credentials: { clinicRefreshTokenApi: { refreshToken: fresh } } });
	expect(fixed.error).toBeUndefined();
	expect(tokenCalls(sim)).toEqual([expect.objectContaining({ status: 200 })]);
});

test('the Test button rotates the pasted token and n8n saves the rotation, so the next run works', async () => {
	const refreshToken = pasted();
	const tested = await testCredential('clinicRefreshTokenApi', refreshCredential(sim, refreshToken));
	watch.record(tested);
	expect(tested).toMatchObject({ status: 'OK', message: 'Connection successful!' });
	const rotated = tested.store.data('clinicRefreshTokenApi').rotatedRefreshToken;
	expect(rotated).toEqual(expect.any(String));
	expect(await refreshDirectly(sim, refreshToken)).toBe(400);

	sim.clearLog();
	const after = await run({ parameters, store: tested.store });
	expect(after.error).toBeUndefined();
	expect(sim.tokenRequests()).toBe(0);

	// A run that needs a new access token uses the rotated refresh token, not the dead pasted one.
	sim.expireAccessTokens();
	sim.clearLog();
	const later = await run({ parameters, store: tested.store });
	expect(later.error).toBeUndefined();
	expect(tokenCalls(sim)).toEqual([expect.objectContaining({ status: 200 })]);
});

test('leak check: no password or token in any output item, error message, description or serialised error', () => {
	expect(watch.recordedCount).toBeGreaterThan(10);
	expect(watch.leaks()).toEqual([]);
});
