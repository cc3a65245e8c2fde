/**
 * Duplicate Check "Event Log" (by event id, nodes/ClinicTrigger/newEvents.ts): a verified
 * delivery wakes the trigger, which runs every event past its cursor in the log, each with
 * its own eventId, whatever the delivery's body. n8n's database copy of the static data is
 * played by `saved`, written as n8n 2.x writes it: when webhook() changed it, and, for a
 * delivery that starts a run, only once the run was stored.
 */
import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { NOTHING_NEW_ANSWER } from '../../nodes/ClinicTrigger/newEvents';
import { isHandled, savedCursor } from '../../nodes/shared/eventCursor';
import { activateTrigger, deliverWebhook } from '../helpers/trigger';
import type { DeliverWebhookOptions, DeliveryResult, HookResult } from '../helpers/trigger';
import { signDelivery, startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import { PATIENT_CREATED, credentialsFor, logNow, logTry } from './support';

let sim: Simulator;
let activated: HookResult;
let secret = '';
/** The static data as n8n's database holds it. */
let saved: IDataObject = {};
const parameters: INodeParameters = { authentication: 'clinicApi', events: [PATIENT_CREATED], options: {} };

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true });
	// Events logged before activation are never the trigger's.
	sim.seedEvents(5, 'patient', 'patient-created');
	activated = await activateTrigger({ parameters, credentials: credentialsFor(sim) });
	if (activated.error) throw activated.error;
	expect(activated.nodeStaticData.cursor).toBeDefined();
	saved = activated.staticData;
	const id = (activated.nodeStaticData[PATIENT_CREATED] as IDataObject).id;
	secret = sim.subscriptions().find((s) => s.id === id)!.authentication_data.secret;
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => {
	sim.clearFaults();
	jest.restoreAllMocks();
});

/** One delivery, signed as the service signs it; n8n's saving of the static data played after it. */
async function deliver(body: IDataObject, storeRun?: DeliverWebhookOptions['storeRun']): Promise<DeliveryResult> {
	const rawBody = Buffer.from(JSON.stringify(body));
	const result = await deliverWebhook({
		parameters,
		store: activated.store,
		staticData: saved,
		rawBody,
		headers: { 'content-type': 'application/json', signature: signDelivery(secret, rawBody) },
		query: { event: PATIENT_CREATED },
		storeRun,
	});
	if (result.staticDataChanged && !result.error && (result.noWebhookResponse || result.workflowData)) saved = result.staticData;
	return result;
}

const idsRun = (results: DeliveryResult[]) => results.flatMap((result) => result.workflowData?.[0].map((item) => item.json.eventId) ?? []);
let counter = 0;
const newValue = () => ({ id: 70_000 + ++counter, first_name: 'Ana', last_name: 'López' });

it('an identifier body runs the logged event with its id and the full record; its copies and re-sends run nothing', async () => {
	const value = newValue();
	const record = logNow(sim, value);
	const first = await deliver({ id: value.id });
	expect(idsRun([first])).toEqual([record.id]);
	const item = first.workflowData![0][0].json;
	expect(item).toMatchObject({ event: 'patient-created', eventId: record.id, createdAt: record.created_at });
	expect(item.value).toEqual(value);
	const copy = await deliver({ id: value.id });
	expect(copy.workflowData).toBeUndefined();
	expect(copy.response).toMatchObject({ status: 200, body: NOTHING_NEW_ANSWER });
	// After a restart (nothing in memory) only what n8n saved counts.
	forgetProcessMemory();
	expect(idsRun([await deliver({ id: value.id }), await deliver({ value })])).toEqual([]);
});

it('two events with one payload each run once with their own id, whichever copy comes first', async () => {
	const value = newValue();
	const [a, b] = [logNow(sim, value), logNow(sim, value)];
	const results = [];
	for (let i = 0; i < 4; i++) results.push(await deliver({ value }));
	expect(idsRun(results)).toEqual([a.id, b.id]);
});

it('copies arriving together share one read: one run, the others answered as nothing new', async () => {
	const value = newValue();
	const record = logNow(sim, value);
	const results = await Promise.all([1, 2, 3, 4].map(async () => await deliver({ value }, { delayMs: 200 })));
	expect(idsRun(results)).toEqual([record.id]);
	expect(results.filter((result) => result.workflowData === undefined).map((result) => result.response.body)).toEqual([NOTHING_NEW_ANSWER, NOTHING_NEW_ANSWER, NOTHING_NEW_ANSWER]);
});

it('events logged while n8n was down run with the first delivery after it, oldest first, once each', async () => {
	const missed = [1, 2, 3, 4, 5].map(() => logNow(sim, newValue()));
	forgetProcessMemory();
	const value = newValue();
	const record = logNow(sim, value);
	const results = [await deliver({ value }), await deliver({ value })];
	expect(idsRun(results)).toEqual([...missed.map((event) => event.id), record.id]);
	expect(results.filter((result) => result.workflowData).length).toBe(1);
});

it("a run n8n refused to store: the service's retry runs its event, once", async () => {
	const value = newValue();
	const record = logNow(sim, value);
	const refused = await deliver({ value }, { fails: () => true });
	expect(refused.response.status).toBe(500);
	expect(idsRun([await deliver({ value })])).toEqual([record.id]);
	expect(idsRun([await deliver({ value })])).toEqual([]);
});

it('a run n8n stored, whose cursor its busy database writes seconds after the answer: a delivery 10 s later that loaded the static data before runs nothing', async () => {
	const value = newValue();
	const record = logNow(sim, value);
	const before = saved;
	expect(idsRun([await deliver({ value })])).toEqual([record.id]);
	// The copy loaded the static data before n8n wrote the run's cursor, and reaches the trigger 10 s after the answer.
	saved = before;
	const now = Date.now();
	jest.spyOn(Date, 'now').mockImplementation(() => now + 10_000);
	expect(idsRun([await deliver({ value })])).toEqual([]);
});

it('an older copy of the static data saved by another node (a poller): one warning, and nothing runs again', async () => {
	const warn = jest.spyOn(Container.get(Logger), 'warn');
	const value = newValue();
	const record = logNow(sim, value);
	const before = saved;
	expect(idsRun([await deliver({ value })])).toEqual([record.id]);
	expect(isHandled(savedCursor(before['node:Clinic Trigger'] as IDataObject)!, record.id)).toBe(false);
	// The poller saves its copy a moment after n8n answered the run.
	await new Promise((resolve) => setTimeout(resolve, 20));
	saved = before;
	expect(idsRun([await deliver({ value }), await deliver({ value })])).toEqual([]);
	expect(warn.mock.calls.filter(([message]) => String(message).includes('saved an older copy'))).toHaveLength(1);
});

it('a run n8n takes a minute to store (its database busy): a copy meanwhile runs nothing', async () => {
	const value = newValue();
	const record = logNow(sim, value);
	let copy: DeliveryResult | undefined;
	const whileStoring = async () => {
		const now = Date.now();
		jest.spyOn(Date, 'now').mockImplementation(() => now + 60_000);
		copy = await deliver({ value });
	};
	expect(idsRun([await deliver({ value }, { whileStoring })])).toEqual([record.id]);
	expect(idsRun([copy!])).toEqual([]);
});

it('a log answering 500: the delivery gets a server error and runs nothing; the retry runs the event once', async () => {
	const value = newValue();
	const record = logNow(sim, value);
	sim.addFault({ kind: 'status', host: 'webhooks', method: 'GET', path: '/events', status: 500 });
	const failed = await deliver({ value });
	expect(failed.response.status).toBe(503);
	expect(failed.workflowData).toBeUndefined();
	sim.clearFaults();
	expect(idsRun([await deliver({ value }), await deliver({ value })])).toEqual([record.id]);
});

it('a log answering later than the service waits: answered 503 before the log answers, nothing runs without an id', async () => {
	const value = newValue();
	const record = logNow(sim, value);
	// The log answers only after this test's own timeout: a delivery that waited for it would fail the test.
	sim.addFault({ kind: 'stall', host: 'webhooks', method: 'GET', path: '/events', ms: 60_000, count: 1 });
	const late = await deliver({ value });
	sim.clearFaults();
	expect(late.response.status).toBe(503);
	expect(late.workflowData).toBeUndefined();
	expect(idsRun([await deliver({ value })])).toEqual([record.id]);
}, 20_000);

it('a trigger activated by a version without cursors: the first delivery runs what was logged in the minute before and did not run here, once', async () => {
	const node = saved['node:Clinic Trigger'] as IDataObject;
	const { cursor: _cursor, ...subscriptions } = node;
	saved = { ...saved, 'node:Clinic Trigger': subscriptions };
	forgetProcessMemory();
	const url = sim.subscriptions().find((s) => s.authentication_data.secret === secret)!.url;
	// What the earlier tests logged, and one more, from five minutes ago.
	logNow(sim, newValue());
	for (const event of sim.events()) event.created_at = new Date(Date.now() - 5 * 60_000).toISOString();
	const ranBefore = logNow(sim, newValue());
	logTry(ranBefore, url, 200);
	const value = newValue();
	const record = logNow(sim, value);
	expect(idsRun([await deliver({ value }), await deliver({ value })])).toEqual([record.id]);
	expect((saved['node:Clinic Trigger'] as IDataObject).cursor).toBeDefined();
});
