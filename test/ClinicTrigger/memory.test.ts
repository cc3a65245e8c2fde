/**
 * What the Clinic Trigger keeps in process memory (nodes/ClinicTrigger/memory.ts): one
 * store, bounded by count and age; a credential is gone from memory once its time is up.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { CREDENTIAL_KEPT_MS, Kept, credentialsKept } from '../../nodes/ClinicTrigger/memory';
import { activateTrigger } from '../helpers/trigger';
import { startSimulator } from '../simulator';
import { PATIENT_CREATED, credentialsFor, deliverSigned, logNow } from './support';

describe('a store bounded by count and age', () => {
	it('never holds more than its count; the oldest goes first', () => {
		const store = new Kept<number>(3, 60_000);
		for (const key of ['a', 'b', 'c', 'd']) store.set(key, 1);
		expect(store.size).toBe(3);
		expect(store.get('a')).toBeUndefined();
		expect(store.get('d')).toBe(1);
	});

	it('forgets what is older than its age: never answered, gone at the next write', () => {
		const now = Date.now();
		const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
		try {
			const store = new Kept<number>(10, 1_000 * 3600);
			store.set('a', 1);
			clock.mockImplementation(() => now + 600);
			store.set('b', 2);
			expect(store.get('a')).toBe(1);
			clock.mockImplementation(() => now + 3_600_000);
			expect(store.get('a')).toBeUndefined();
			store.set('c', 3);
			expect(store.size).toBe(2);
		} finally {
			clock.mockRestore();
		}
	});
});

it(`a delivery's credential is gone from memory ${CREDENTIAL_KEPT_MS / 1000} s after it was read`, async () => {
	const sim = await startSimulator({ allowHttpCallbacks: true });
	try {
		forgetProcessMemory();
		const parameters: INodeParameters = { authentication: 'clinicApi', events: [PATIENT_CREATED], options: {} };
		const activated = await activateTrigger({ parameters, credentials: credentialsFor(sim) });
		const id = (activated.nodeStaticData[PATIENT_CREATED] as IDataObject).id;
		const secret = sim.subscriptions().find((s) => s.id === id)!.authentication_data.secret;
		const value = { id: 7, first_name: 'Ana' };
		logNow(sim, value);
		expect((await deliverSigned({ parameters, activated, secret }, value)).workflowData).toBeDefined();
		expect(credentialsKept()).toBe(1);
		await new Promise((resolve) => setTimeout(resolve, CREDENTIAL_KEPT_MS + 100));
		expect(credentialsKept()).toBe(0);
	} finally {
		await sim.close();
	}
}, 30_000);
