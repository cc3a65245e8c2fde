/**
 * Real deliveries: the trigger subscribes on the simulator with a local http:// address
 * ("Allow Insecure URL"), the simulator POSTs signed events there, and a small server
 * standing where n8n's webhook server stands hands each request to the trigger's
 * webhook() through n8n-core. Nothing here computes a signature: the simulator does.
 */

import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { activateTrigger, runTriggerHook } from '../helpers/trigger';
import { signDelivery, startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import { CONSULTATION_FINISHED, PATIENT_CREATED, TWR_JOINED, credentialsFor, live, startReceiver } from './support';
import type { ReceiverState } from './support';

let sim: Simulator;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const state: ReceiverState = {
	parameters: {},
	staticData: {},
};

beforeAll(async () => {
	// The service waits 30 s for an answer, as webhook services commonly do.
	sim = await startSimulator({ allowHttpCallbacks: true, deliveryRetryDelayMs: 20, deliveryTimeoutMs: 30_000 });
	receiver = await startReceiver(state);
});

afterAll(async () => {
	await receiver.close();
	await sim.close();
});

beforeEach(() => {
	sim.reset();
	// The simulator numbers its events from 1 again after a reset.
	forgetProcessMemory();
	receiver.results.length = 0;
	state.storeFailures = 0;
	state.storeDelayMs = 0;
});

async function activate(events: string[], mode: 'trigger' | 'manual' = 'trigger') {
	state.mode = mode;
	state.parameters = { authentication: 'clinicApi', events, options: { allowInsecureUrl: true } };
	const activated = await activateTrigger({
		parameters: state.parameters,
		credentials: credentialsFor(sim),
		webhookUrl: receiver.webhookUrl(),
		mode,
	});
	if (activated.error) throw activated.error;
	state.store = activated.store;
	state.staticData = activated.staticData;
	return activated;
}

const patient = { id: 31, first_name: 'Ana', last_name: 'López', email: 'ana@example.test' };

it('an emitted event reaches the workflow once, verified, with its payload and topic', async () => {
	await activate([PATIENT_CREATED, CONSULTATION_FINISHED]);
	const record = await sim.emit('patient', 'patient-created', patient);

	expect(record.logs.map((log) => log.response_code)).toEqual([200]);
	const executions = receiver.executions();
	expect(executions).toHaveLength(1);
	expect(executions[0].workflowData?.[0].map((item) => item.json)).toEqual([
		{
			event: 'patient-created',
			topic: 'clinic-38729.patient',
			eventId: record.id,
			createdAt: record.created_at,
			receivedAt: expect.any(String),
			value: patient,
		},
	]);
});

it('a delivery reads the credential once, for its signature and its event-log check alike', async () => {
	await activate([PATIENT_CREATED]);
	const reads = jest.spyOn(state.store!, 'load');
	try {
		const record = await sim.emit('patient', 'patient-created', patient);
		expect(record.logs.map((log) => log.response_code)).toEqual([200]);
		expect(receiver.executions()[0].workflowData?.[0][0].json.eventId).toBe(record.id);
		expect(reads).toHaveBeenCalledTimes(1);
	} finally {
		reads.mockRestore();
	}
});

it('each event goes to its own subscription and comes out under its own name', async () => {
	await activate([PATIENT_CREATED, CONSULTATION_FINISHED, TWR_JOINED]);
	await sim.emit('consultation', 'consultation-finished', { id: 5, finished_at: '2025-01-02T10:00:00Z' });
	await sim.emit('waiting-room', 'patient-joined-twr', { patient_id: 31 });
	await sim.emit('patient', 'patient-updated', patient); // not selected: the service sends nothing
	expect(receiver.executions().map((r) => r.workflowData?.[0][0].json.event)).toEqual([
		'consultation-finished',
		'patient-joined-twr',
	]);
});

it('sequential duplicate deliveries -> one execution, both copies answered 200', async () => {
	await activate([PATIENT_CREATED]);
	sim.setDuplicateDeliveries('sequential');
	const record = await sim.emit('patient', 'patient-created', patient);
	expect(record.logs.map((log) => log.response_code)).toEqual([200, 200]);
	expect(receiver.results).toHaveLength(2);
	expect(receiver.executions()).toHaveLength(1);
});

it('two distinct events with the same payload start two runs, each with its own event id', async () => {
	await activate([TWR_JOINED]);
	const joined = { patient_id: 31, waiting_room_id: 2 };
	const first = await sim.emit('waiting-room', 'patient-joined-twr', joined);
	const second = await sim.emit('waiting-room', 'patient-joined-twr', joined);
	expect(first.id).not.toBe(second.id);
	const runs = receiver.executions().map((r) => r.workflowData?.[0][0].json);
	expect(runs.map((json) => json?.eventId)).toEqual([first.id, second.id]);
	expect(runs.map((json) => json?.value)).toEqual([joined, joined]);
});

it('a repeated delivery of one event (byte-identical, no id anywhere) starts no second run', async () => {
	await activate([TWR_JOINED]);
	const joined = { patient_id: 32, waiting_room_id: 2 };
	sim.setDuplicateDeliveries('sequential');
	const record = await sim.emit('waiting-room', 'patient-joined-twr', joined);
	sim.setDuplicateDeliveries('off');
	expect(receiver.results).toHaveLength(2);
	expect(receiver.executions().map((r) => r.workflowData?.[0][0].json.eventId)).toEqual([record.id]);
	// The same payload again, as a new event: a run of its own.
	const again = await sim.emit('waiting-room', 'patient-joined-twr', joined);
	expect(receiver.executions().map((r) => r.workflowData?.[0][0].json.eventId)).toEqual([record.id, again.id]);
});

it('a delivery n8n failed to store (answered 500), retried at once: the retry runs its event; the next delivery runs only its own', async () => {
	await activate([PATIENT_CREATED]);
	state.storeFailures = 1;
	const record = await sim.emit('patient', 'patient-created', patient);
	expect(record.logs.map((log) => log.response_code)).toEqual([500, 200]);
	expect(receiver.executions().map((r) => r.workflowData?.[0].map((item) => item.json.eventId))).toEqual([[record.id]]);
	sim.setDuplicateDeliveries('sequential');
	const other = await sim.emit('patient', 'patient-created', { ...patient, id: 77 });
	expect(other.logs.map((log) => log.response_code)).toEqual([200, 200]);
	expect(receiver.executions().map((r) => r.workflowData?.[0].map((item) => item.json.eventId))).toEqual([[record.id], [other.id]]);
});

it('deliveries re-sent after n8n restarted, each answered 200 before it: none runs again', async () => {
	await activate([PATIENT_CREATED]);
	const records = [];
	for (let i = 0; i < 5; i++) records.push(await sim.emit('patient', 'patient-created', { ...patient, id: 4000 + i }));
	expect(records.map((record) => record.logs.map((log) => log.response_code))).toEqual(records.map(() => [200]));
	forgetProcessMemory(); // n8n restarted
	const [subscription] = live(sim);
	for (const record of records) {
		const sent = record.logs[0];
		const answer = await fetch(subscription.url, {
			method: 'POST',
			headers: { 'content-type': 'application/json', signature: signDelivery(subscription.authentication_data.secret, Buffer.from(String(sent.request))) },
			body: String(sent.request),
		});
		expect({ status: answer.status, body: await answer.json() }).toEqual({ status: 200, body: { received: true, duplicate: true } });
	}
	expect(receiver.executions().map((r) => r.workflowData?.[0][0].json.eventId)).toEqual(records.map((record) => record.id));
});

it('concurrent duplicate deliveries -> one execution', async () => {
	await activate([PATIENT_CREATED]);
	sim.setDuplicateDeliveries('concurrent');
	for (let i = 0; i < 5; i++) await sim.emit('patient', 'patient-created', { ...patient, id: 1000 + i });
	await sim.deliveriesSettled();
	expect(receiver.results).toHaveLength(10);
	expect(receiver.executions()).toHaveLength(5);
	expect(new Set(receiver.executions().map((r) => r.workflowData?.[0][0].json.eventId)).size).toBe(5);
});

it('a subscription whose secret n8n does not hold (static data lost) is refused 401 and retried, no execution', async () => {
	await activate([PATIENT_CREATED]);
	state.staticData = {};
	const record = await sim.emit('patient', 'patient-created', patient);
	expect(record.logs.map((log) => log.response_code)).toEqual([401, 401, 401, 401]);
	expect(receiver.executions()).toHaveLength(0);
});

it('after deactivation nothing is delivered any more', async () => {
	const activated = await activate([PATIENT_CREATED]);
	const deleted = await runTriggerHook('delete', {
		parameters: state.parameters,
		store: activated.store,
		staticData: activated.staticData,
		webhookUrl: receiver.webhookUrl(),
	});
	expect(deleted.result).toBe(true);
	expect(live(sim)).toHaveLength(0);
	const record = await sim.emit('patient', 'patient-created', patient);
	expect(record.logs).toHaveLength(0);
	expect(receiver.results).toHaveLength(0);
});

it('"Listen for test event": the /webhook-test/ subscription delivers, then is removed', async () => {
	const listening = await activate([PATIENT_CREATED], 'manual');
	expect(live(sim)[0].url).toContain('/webhook-test/');
	await sim.emit('patient', 'patient-created', patient);
	expect(receiver.executions()).toHaveLength(1);
	expect(receiver.executions()[0].workflowData?.[0][0].json.value).toEqual(patient);

	// n8n removes the test webhook after the first delivery.
	const stopped = await runTriggerHook('delete', {
		parameters: state.parameters,
		store: listening.store,
		staticData: listening.staticData,
		webhookUrl: receiver.webhookUrl(),
		mode: 'manual',
	});
	expect(stopped.result).toBe(true);
	expect(live(sim)).toHaveLength(0);
});

it('the secret is neither in static data nor in what the workflow gets', async () => {
	const activated = await activate([PATIENT_CREATED]);
	await sim.emit('patient', 'patient-created', patient);
	const secret = live(sim)[0].authentication_data.secret;
	expect(secret).toMatch(/^[0-9a-f]{64}$/);
	expect(JSON.stringify(activated.staticData)).not.toContain(secret);
	expect(JSON.stringify(receiver.executions()[0].workflowData)).not.toContain(secret);
	expect(JSON.stringify(receiver.results.map((r) => r.response))).not.toContain(secret);
});
