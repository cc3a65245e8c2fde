/** The simulator, in the benchmark process, on loopback. */
import { startSimulator, type Simulator } from '../../test/simulator';

export type { Simulator };

export async function startBenchSimulator(): Promise<Simulator> {
	// A large request log would only cost the benchmark process memory.
	return await startSimulator({ host: '127.0.0.1', allowHttpCallbacks: true, logLimit: 5000 });
}

/** One access token from the token endpoint (what a user pastes into a fixed header). */
export async function fetchAccessToken(sim: Simulator): Promise<string> {
	const response = await fetch(`${sim.apiBaseUrl}/oauth/token`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', accept: 'application/json' },
		body: JSON.stringify({ grant_type: 'password', username: sim.demo.username, password: sim.demo.password }),
	});
	const body = (await response.json()) as { access_token?: string };
	if (!response.ok || !body.access_token) throw new Error(`token endpoint answered ${response.status}`);
	return body.access_token;
}

/** Counts the simulator's token requests (all grants) made while `fn` runs. */
export async function countTokens<T>(sim: Simulator, fn: () => Promise<T>): Promise<{ value: T; tokens: number }> {
	const before = sim.tokenRequests();
	const value = await fn();
	return { value, tokens: sim.tokenRequests() - before };
}
