/**
 * What a delivery costs in reads of the event log with Duplicate Check "Event Log" (by event
 * id: nodes/ClinicTrigger/newEvents.ts, with the Event Log Trigger's cursor): activation
 * finds the log's end once; after that a delivery reads on from the cursor's place,
 * whatever the log's length and order. Pages the service caps below the size asked for
 * lose nothing, but cost more: the cursor reads back over the ids it still watches for
 * late arrivals (LATE_COMMIT_MS). The static data is carried from one delivery to the next
 * as n8n saves it; the log and the request count are the simulator's.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { activateTrigger, deliverWebhook } from '../helpers/trigger';
import type { DeliveryResult } from '../helpers/trigger';
import { signDelivery, startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import type { EventOrder } from '../simulator/types';
import { PATIENT_CREATED, credentialsFor } from './support';

let sim: Simulator;
const parameters: INodeParameters = { authentication: 'clinicApi', events: [PATIENT_CREATED], options: {} };

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true });
});

afterAll(async () => {
	await sim.close();
});

afterEach(() => {
	sim.onEventsPage(null);
	expect(sim.internalErrors()).toEqual([]);
});

let counter = 0;
const logEvent = () => {
	const value = { id: 10_000 + ++counter, first_name: 'Ana' };
	sim.seedEvents(1, 'patient', 'patient-created', () => value);
	return { id: sim.events().at(-1)!.id, value };
};

/** A log of `length` events listed in `order`, a trigger activated on it, and a sender of signed deliveries. */
async function triggerOn(length: number, order: EventOrder) {
	sim.reset();
	forgetProcessMemory();
	sim.setEventOrder(order);
	sim.seedEvents(length, 'patient', 'patient-created');
	const activated = await activateTrigger({ parameters, credentials: credentialsFor(sim) });
	if (activated.error) throw activated.error;
	const id = (activated.nodeStaticData[PATIENT_CREATED] as IDataObject).id;
	const secret = sim.subscriptions().find((s) => s.id === id)!.authentication_data.secret;
	let saved = activated.staticData;
	/** One delivery; the GET /events requests it took. */
	return async (value: IDataObject): Promise<{ result: DeliveryResult; reads: number }> => {
		sim.clearLog();
		const rawBody = Buffer.from(JSON.stringify({ value }));
		const result = await deliverWebhook({ parameters, store: activated.store, staticData: saved, rawBody, headers: { signature: signDelivery(secret, rawBody) }, query: { event: PATIENT_CREATED } });
		expect(result.error).toBeUndefined();
		if (result.staticDataChanged) saved = result.staticData;
		return { result, reads: sim.log.filter((entry) => entry.path === '/events').length };
	};
}

const idsOf = (result: DeliveryResult) => result.workflowData?.[0].map((item) => item.json.eventId) ?? [];

describe.each([
	[20, 'oldest-first'],
	[20_000, 'oldest-first'],
	[20, 'newest-first'],
	[20_000, 'newest-first'],
] as Array<[number, EventOrder]>)('a log of %d events listed %s', (length, order) => {
	it('each delivery runs its event and costs at most 2 reads, copies included', async () => {
		const deliver = await triggerOn(length, order);
		const reads: number[] = [];
		for (let i = 0; i < 10; i++) {
			const event = logEvent();
			if (i % 3 === 0) sim.seedEvents(2, 'patient', 'patient-updated'); // other events in between
			const first = await deliver(event.value);
			expect(idsOf(first.result)).toEqual([event.id]);
			const copy = await deliver(event.value);
			expect(idsOf(copy.result)).toEqual([]);
			reads.push(first.reads, copy.reads);
		}
		expect(Math.max(...reads)).toBeLessThanOrEqual(2);
	}, 60_000);

	it('pages capped at 7 and 250 events logged since: all run once, oldest first, in runs of at most 100', async () => {
		const deliver = await triggerOn(length, order);
		await deliver(logEvent().value);
		sim.onEventsPage((page) => {
			page.length = Math.min(page.length, 7);
		});
		const events = Array.from({ length: 250 }, logEvent);
		const runs = [];
		for (let i = 0; i < 3; i++) runs.push(idsOf((await deliver(events[0].value)).result));
		expect(runs.map((run) => run.length)).toEqual([100, 100, 50]);
		expect(runs.flat()).toEqual(events.map((event) => event.id));
		const next = logEvent();
		const warm = await deliver(next.value);
		expect(idsOf(warm.result)).toEqual([next.id]);
		// Ids that join up move the floor at once: the next read starts near the end.
		expect(warm.reads).toBeLessThanOrEqual(3);
	}, 60_000);
});

describe('static data without a cursor (a first delivery before any activation)', () => {
	/** `count` deliveries at once to a trigger whose cursor is gone from its static data; the one-event pages they asked for (finding the log's end). */
	async function burstWithoutCursor(count: number): Promise<number> {
		sim.reset();
		forgetProcessMemory();
		sim.setEventOrder('oldest-first');
		sim.seedEvents(20_000, 'patient', 'patient-created');
		const activated = await activateTrigger({ parameters, credentials: credentialsFor(sim) });
		const staticData = JSON.parse(JSON.stringify(activated.staticData)) as Record<string, IDataObject>;
		delete staticData[`node:Clinic Trigger`].cursor;
		const id = (activated.nodeStaticData[PATIENT_CREATED] as IDataObject).id;
		const secret = sim.subscriptions().find((s) => s.id === id)!.authentication_data.secret;
		const { value } = logEvent();
		const rawBody = Buffer.from(JSON.stringify({ value }));
		sim.clearLog();
		const deliveries = Array.from({ length: count }, async () => await deliverWebhook({ parameters, store: activated.store, staticData, rawBody, headers: { signature: signDelivery(secret, rawBody) }, query: { event: PATIENT_CREATED } }));
		for (const result of await Promise.all(deliveries)) expect(result.error).toBeUndefined();
		return sim.log.filter((entry) => entry.path === '/events' && entry.query.limit === '1').length;
	}

	it("a burst finds the log's end once, as one delivery does", async () => {
		const one = await burstWithoutCursor(1);
		// The end of 20,000 events listed oldest first is found in a dozen or more one-event pages.
		expect(one).toBeGreaterThan(10);
		expect(await burstWithoutCursor(8)).toBe(one);
	}, 60_000);
});
