/**
 * The triggers' Output choice: version 1 items as before; version 1.1 keeps everything about
 * the event and reduces its value (a patient, a consultation) to ids, or ids plus picked fields.
 */
import type { INodeParameters } from 'n8n-workflow';

import { CredentialStore, forgetProcessMemory, runPoll } from '../helpers';
import { deliverWebhook } from '../helpers/trigger';
import { startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import { integrationCredentials } from '../Clinic/support';
import { PATIENT_CREATED, credentialsFor } from '../ClinicTrigger/support';

let sim: Simulator;
beforeAll(async () => {
	sim = await startSimulator();
});
afterAll(async () => {
	await sim.close();
});
beforeEach(() => {
	sim.reset();
	forgetProcessMemory();
});

const patient = { id: 31, account_id: 1201, first_name: 'María Fernanda', last_name: 'González López', telephone2: '5512345678', email: 'maria.gonzalez@example.mx' };

describe('Clinic Trigger', () => {
	async function deliver(typeVersion: number, extra: INodeParameters = {}) {
		const rawBody = Buffer.from(JSON.stringify({ value: patient }));
		const result = await deliverWebhook({
			parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED], options: { verification: 'none', duplicateCheck: 'off' }, ...extra },
			credentials: credentialsFor(sim),
			rawBody,
			headers: { 'content-type': 'application/json' },
			query: { event: PATIENT_CREATED },
			typeVersion,
		});
		const json = result.workflowData?.[0][0].json;
		if (!json) throw new Error(`no item: ${JSON.stringify(result.response ?? result.error?.message)}`);
		return json;
	}

	it('version 1 (saved workflows): the whole payload, as before', async () => {
		expect((await deliver(1)).value).toEqual(patient);
	});

	it('version 1.1, Simplified by default: the event with the ids of its value', async () => {
		const json = await deliver(1.1);
		expect(json).toMatchObject({ event: 'patient-created', topic: `${sim.topicPrefix}.patient`, deliveryId: expect.any(String) });
		expect(json.value).toEqual({ id: 31, account_id: 1201 });
		expect(JSON.stringify(json)).not.toMatch(/María|5512345678|example\.mx/);
	});

	it('Selected Fields adds the picked fields; Raw gives the whole value', async () => {
		expect((await deliver(1.1, { outputMode: 'fields', outputFields: 'email, first_name' })).value).toEqual({
			id: 31,
			account_id: 1201,
			email: 'maria.gonzalez@example.mx',
			first_name: 'María Fernanda',
		});
		expect((await deliver(1.1, { outputMode: 'raw' })).value).toEqual(patient);
	});
});

describe('Clinic Event Log Trigger', () => {
	async function poll(typeVersion: number, extra: INodeParameters = {}) {
		const store = new CredentialStore();
		store.add('clinicApi', integrationCredentials(sim));
		await sim.emit('patient', 'patient-created', patient);
		const result = await runPoll({
			parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED], ...extra },
			store,
			mode: 'manual',
			typeVersion,
		});
		if (result.error) throw result.error;
		return result.items![0].json;
	}

	it('version 1: the whole value; 1.1: ids only by default, picked fields on demand', async () => {
		expect((await poll(1)).value).toEqual(patient);
		const simple = await poll(1.1);
		expect(simple).toMatchObject({ event: 'patient-created', eventId: expect.any(Number), value: { id: 31, account_id: 1201 } });
		expect(Object.keys(simple.value as object).sort()).toEqual(['account_id', 'id']);
		expect((await poll(1.1, { outputMode: 'fields', outputFields: 'telephone2' })).value).toEqual({
			id: 31,
			account_id: 1201,
			telephone2: '5512345678',
		});
	});
});
