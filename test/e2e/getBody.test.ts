/**
 * Why `GET /events` goes through n8n's legacy request helper (docs/verification-checklist.md):
 * each tested n8n's own request helpers send `GET /events` with the body `{"limit": 1}` to
 * the simulator, which reads the parameters only from the body, as the contract declares.
 * `httpRequestWithAuthentication` drops a GET's body (all three events come back);
 * `requestWithAuthentication` sends it (one event).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { startSimulator, type Simulator } from '../simulator';
import { accessToken } from '../simulator/testing';
import { ALL_N8N_VERSIONS, ensureN8n } from './harness';

let sim: Simulator;

beforeAll(async () => {
	sim = await startSimulator();
	sim.setEventParams('body');
	sim.seedEvents(3, 'patient', 'patient-created');
});

afterAll(async () => {
	await sim.close();
});

describe.each(ALL_N8N_VERSIONS)('n8n %s: a GET with a JSON body through n8n\'s request helpers', (version) => {
	it('httpRequestWithAuthentication drops the body; the legacy requestWithAuthentication sends it', async () => {
		const install = ensureN8n(version);
		// Not execFileSync: the simulator answers from this process.
		const { stdout } = await promisify(execFile)(
			install.nodeBin,
			[join(__dirname, 'support', 'getBodyProbe.cjs'), join(install.dir, 'node_modules'), String(install.major), `${sim.webhooksBaseUrl}/events`],
			{ encoding: 'utf8', env: { ...process.env, CLINIC_TOKEN: await accessToken(sim) }, timeout: 60_000 },
		);
		expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({ httpRequestWithAuthentication: 3, requestWithAuthentication: 1 });
		const reads = sim.log.filter((entry) => entry.path === '/events').slice(-2);
		expect(reads.map((entry) => entry.body)).toEqual([null, { limit: 1 }]);
	});
});
