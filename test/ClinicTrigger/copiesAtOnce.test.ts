/**
 * The duplicate check decides from the service's event log (nodes/ClinicTrigger/duplicateCheck.ts):
 * copies arriving together claim the event once in memory (the log cannot show a try not
 * answered yet); copies arriving one after the other, in this process or after a restart or
 * at another webhook processor, are told by the log's tries at the trigger's address.
 * n8n's storing of a run is played by deliverWebhook's `storeRun`, after webhook() returned;
 * the service's log of each try by `logTry`.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { REPEAT_ANSWER } from '../../nodes/ClinicTrigger/duplicateCheck';
import { TRIGGER_WEBHOOK_ID, activateTrigger } from '../helpers/trigger';
import type { DeliveryResult, HookResult } from '../helpers/trigger';
import { startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import { PATIENT_CREATED, credentialsFor, deliverSigned, logNow, logTry } from './support';

let sim: Simulator;
let activated: HookResult;
let secret = '';
let url = '';
const parameters: INodeParameters = { authentication: 'clinicApi', events: [PATIENT_CREATED], options: {} };

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true });
	activated = await activateTrigger({ parameters, credentials: credentialsFor(sim) });
	if (activated.error) throw activated.error;
	const id = (activated.nodeStaticData[PATIENT_CREATED] as IDataObject).id;
	const subscription = sim.subscriptions().find((s) => s.id === id)!;
	secret = subscription.authentication_data.secret;
	url = subscription.url;
	expect(url).toContain(TRIGGER_WEBHOOK_ID);
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => {
	forgetProcessMemory();
});

let counter = 0;
const newValue = () => ({ id: 50_000 + ++counter, first_name: 'Ana' });
const send = async (value: IDataObject, storeRun?: Parameters<typeof deliverSigned>[2]) => await deliverSigned({ parameters, activated, secret }, value, storeRun);
const runsOf = (results: DeliveryResult[]) => results.filter((result) => result.workflowData !== undefined);
const idsRun = (results: DeliveryResult[]) => runsOf(results).map((result) => result.workflowData?.[0][0].json.eventId);
const statuses = (results: DeliveryResult[]) => results.map((result) => result.response.status).sort();

it('three copies at once, n8n stores the first run: one run, the other two answered as repeats', async () => {
	const value = newValue();
	const record = logNow(sim, value);
	const results = await Promise.all([1, 2, 3].map(async () => await send(value, { delayMs: 300 })));
	expect(idsRun(results)).toEqual([record.id]);
	expect(statuses(results)).toEqual([200, 200, 200]);
	expect(results.filter((result) => (result.response.body as IDataObject | undefined)?.duplicate === true)).toHaveLength(2);
});

it('three copies at once, n8n refuses the first run (500): the others are repeats; the retry, with the 500 in the log, runs the event once', async () => {
	const value = newValue();
	const record = logNow(sim, value);
	let refuse = 1;
	const results = await Promise.all([1, 2, 3].map(async () => await send(value, { delayMs: 300, fails: () => refuse-- > 0 })));
	expect(statuses(results)).toEqual([200, 200, 500]);
	expect(idsRun(results)).toEqual([]);
	// The service logs each answer: one server error, two repeat answers.
	logTry(record, url, 500);
	logTry(record, url, 200, JSON.stringify(REPEAT_ANSWER));
	logTry(record, url, 200, JSON.stringify(REPEAT_ANSWER));
	const retry = await send(value);
	expect(idsRun([retry])).toEqual([record.id]);
	logTry(record, url, 200);
	expect((await send(value)).response.body).toEqual(REPEAT_ANSWER);
});

it('after n8n restarted (nothing in memory): a copy of an event the log shows answered 200 at this address runs nothing', async () => {
	const value = newValue();
	const record = logNow(sim, value);
	expect(idsRun([await send(value)])).toEqual([record.id]);
	logTry(record, url, 200);
	forgetProcessMemory(); // a restart, or the copy arriving at another webhook processor
	const copy = await send(value);
	expect(copy.workflowData).toBeUndefined();
	expect(copy.response.body).toEqual(REPEAT_ANSWER);
});

it('after n8n restarted: an event the log shows refused at this address (500) runs at the retry', async () => {
	const value = newValue();
	const record = logNow(sim, value);
	logTry(record, url, 500);
	forgetProcessMemory();
	expect(idsRun([await send(value)])).toEqual([record.id]);
});

it('an identical payload logged before the trigger subscribed is not taken for the delivery: the run carries the new event, and its copy runs nothing', async () => {
	const value = newValue();
	sim.seedEvents(1, 'patient', 'patient-created', () => value); // logged before the subscription was made
	const old = sim.events().at(-1)!;
	old.created_at = new Date(Date.now() - 3_600_000).toISOString();
	const record = logNow(sim, value);
	expect(idsRun([await send(value)])).toEqual([record.id]);
	logTry(record, url, 200);
	forgetProcessMemory();
	expect((await send(value)).response.body).toEqual(REPEAT_ANSWER);
});

describe('the event log answering later than the check waits (7 s)', () => {
	const slowLog = () => sim.addFault({ kind: 'stall', ms: 7_000, host: 'webhooks', method: 'GET', path: '/events', count: 1 });
	const notes = (results: DeliveryResult[]) => runsOf(results).map((result) => result.workflowData?.[0][0].json.note !== undefined);

	it('two copies at once: one runs without an id, the other waits for the log and is a repeat; a later copy is a repeat too', async () => {
		const value = newValue();
		const record = logNow(sim, value);
		slowLog();
		const results = await Promise.all([1, 2].map(async () => await send(value)));
		expect(idsRun(results)).toEqual([null]);
		expect(notes(results)).toEqual([true]);
		expect(results.filter((result) => (result.response.body as IDataObject | undefined)?.duplicate === true)).toHaveLength(1);
		// The run without an id claimed its event once the log answered.
		expect((await send(value)).response.body).toEqual(REPEAT_ANSWER);
		expect(record.id).toBeGreaterThan(0);
	}, 30_000);

	it('a copy arriving after its event ran here waits for the log and is a repeat; a new payload runs without an id before the log answers', async () => {
		const value = newValue();
		const record = logNow(sim, value);
		expect(idsRun([await send(value)])).toEqual([record.id]);
		slowLog();
		expect((await send(value)).response.body).toEqual(REPEAT_ANSWER);
		const other = newValue();
		logNow(sim, other);
		slowLog();
		// No id: it was answered before the log was (with the log's answer it would carry one).
		expect(idsRun([await send(other)])).toEqual([null]);
	}, 30_000);

	it('two events with the same content at once: both run, the second with its own event id', async () => {
		const value = newValue();
		logNow(sim, value);
		const second = logNow(sim, value);
		slowLog();
		const results = await Promise.all([1, 2].map(async () => await send(value)));
		expect(idsRun(results).sort()).toEqual([second.id, null].sort());
	}, 30_000);
});
