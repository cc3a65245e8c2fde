/**
 * What the Clinic Trigger keeps in process memory (nodes/ClinicTrigger/memory.ts): one
 * store, bounded by count and age; a credential is gone from memory once its time is up.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { TRIGGERS_KEPT, memoryOf } from '../../nodes/ClinicTrigger/memory';
import { ANSWER_WITHIN_MS } from '../../nodes/ClinicTrigger/newEvents';
import { activateTrigger } from '../helpers/trigger';
import { startSimulator } from '../simulator';
import { PATIENT_CREATED, credentialsFor, deliverSigned, logNow } from './support';

describe("the trigger's memory, bounded by count and age", () => {
	beforeEach(() => forgetProcessMemory());

	it(`never holds more than ${TRIGGERS_KEPT} triggers; the least recently used goes first`, () => {
		const first = memoryOf('trigger 0');
		first.listedAt = 1;
		for (let i = 1; i <= TRIGGERS_KEPT; i++) memoryOf(`trigger ${i}`);
		expect(memoryOf('trigger 0').listedAt).toBeUndefined();
		expect(memoryOf(`trigger ${TRIGGERS_KEPT}`)).toBe(memoryOf(`trigger ${TRIGGERS_KEPT}`));
	});
});

it(`a delivery's credential is gone from memory ${ANSWER_WITHIN_MS / 1000} s after it was read`, async () => {
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
		// The delivery's entry, keyed as receive.ts keys it: workflow id, node name and mode (test/helpers/trigger.ts).
		const { credentials } = memoryOf(['clinic-trigger-workflow', 'Clinic Trigger', 'trigger'].join('\n'));
		expect(credentials.size).toBe(1);
		await new Promise((resolve) => setTimeout(resolve, ANSWER_WITHIN_MS + 100));
		expect(credentials.size).toBe(0);
	} finally {
		await sim.close();
	}
}, 30_000);
