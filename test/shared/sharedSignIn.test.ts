/**
 * One sign-in shared by every request that needs it, through the nodes' transport
 * (nodes/shared/session.ts: one request has n8n sign in, the others wait for it) and
 * n8n-core with the Clinic API (password) credential: parallel items, items one after
 * the other, two executions at once, and many requests refused after a revocation.
 * Every run is also fed to the file's leak check.
 */
import { CredentialStore } from '../helpers';
import type { Simulator } from '../simulator';
import { apiCalls, getConsultation, passwordCredential, useSimulator } from '../credentials/support';

let sim: Simulator;
const { watch, run } = useSimulator((started) => (sim = started));

const parameters = { authentication: 'clinicApi', ...getConsultation('1') };

describe('one pending sign-in per credential session', () => {
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
	expect(watch.recordedCount).toBeGreaterThan(4);
	expect(watch.secretCount).toBeGreaterThan(8);
	expect(watch.leaks()).toEqual([]);
});
