/**
 * The duplicate check's reads of the event log per delivery (nodes/shared/eventLog.ts
 * `EventLog.tail`): on an oldest-first log the process remembers where the log ended and
 * reads only its newest events from there, one request per delivery instead of a search
 * over the whole log; when the log no longer looks as
 * remembered (shorter, reset, reordered, capped pages) the delivery is still matched to
 * its own logged event. Deliveries go through
 * n8n-core's WebhookContext; the log and the request count are the simulator's.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { taken } from '../../nodes/ClinicTrigger/memory';
import { activateTrigger } from '../helpers/trigger';
import type { DeliveryResult, HookResult } from '../helpers/trigger';
import { startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import { PATIENT_CREATED, credentialsFor, deliverSigned } from './support';

let sim: Simulator;
let activated: HookResult;
const parameters: INodeParameters = { authentication: 'clinicApi', events: [PATIENT_CREATED], options: {} };

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true });
	activated = await activateTrigger({ parameters, credentials: credentialsFor(sim) });
	if (activated.error) throw activated.error;
});

afterAll(async () => {
	await sim.close();
});

/** The subscription's secret, read before any reset of the log (a reset drops subscriptions). */
let secret = '';
beforeAll(() => {
	const id = (activated.nodeStaticData[PATIENT_CREATED] as IDataObject).id;
	secret = sim.subscriptions().find((s) => s.id === id)!.authentication_data.secret;
});

beforeEach(() => {
	// A fresh log numbers its events from 1 again: so does a fresh process's memory.
	sim.reset();
	sim.setEventOrder('oldest-first');
	sim.onEventsPage(null);
	forgetProcessMemory();
});

afterEach(() => {
	expect(sim.internalErrors()).toEqual([]);
});

let counter = 0;

/** Logs a patient-created event with a value of its own, now (as the service does before delivering it). */
function logEvent(value: IDataObject = { id: 10_000 + ++counter, first_name: 'Ana', last_name: `López ${counter}` }) {
	sim.seedEvents(1, 'patient', 'patient-created', () => value);
	const logged = sim.events().at(-1)!;
	logged.created_at = new Date().toISOString();
	return { id: logged.id, value };
}

/** Filler events of the same kind (the seed people's values). */
function seed(count: number) {
	sim.seedEvents(count, 'patient', 'patient-created');
}

/** Delivers a value as the service does, signed with the subscription's secret. */
async function send(value: IDataObject): Promise<DeliveryResult> {
	const result = await deliverSigned({ parameters, activated, secret }, value);
	expect(result.error).toBeUndefined();
	return result;
}

/** Delivers a value; answers the result and the GET /events requests it took. */
async function deliver(value: IDataObject): Promise<{ result: DeliveryResult; reads: number }> {
	sim.clearLog();
	const result = await send(value);
	return { result, reads: sim.log.filter((entry) => entry.path === '/events').length };
}

const eventIdOf = (result: DeliveryResult) => result.workflowData?.[0][0].json.eventId;

describe('an oldest-first log of 5,000 events', () => {
	it('the first delivery searches for the end; the next ones take one read each (what was logged since), and find their own event', async () => {
		seed(5000);
		const first = logEvent();
		const cold = await deliver(first.value);
		expect(eventIdOf(cold.result)).toBe(first.id);
		// 2·log2(5000/100) single-event probes around the end, plus the pages read.
		expect(cold.reads).toBeGreaterThanOrEqual(12);

		const warm: number[] = [];
		for (let i = 0; i < 20; i++) {
			const event = logEvent();
			if (i % 5 === 0) seed(3); // other events of the kind in between
			const { result, reads } = await deliver(event.value);
			expect(eventIdOf(result)).toBe(event.id);
			warm.push(reads);
		}
		expect(Math.max(...warm)).toBe(1);
	});

	it('a repeated delivery is still answered as one with a warm memory; a second event with the same payload still runs', async () => {
		seed(5000);
		const event = logEvent();
		expect(eventIdOf((await deliver(event.value)).result)).toBe(event.id);

		const again = await deliver(event.value);
		expect(again.result.workflowData).toBeUndefined();
		expect(again.result.response.body).toEqual({ received: true, duplicate: true });
		// What was logged since holds no new event for it: the newest events are read again, as they are now.
		expect(again.reads).toBeLessThanOrEqual(3);

		const twin = logEvent(event.value);
		const second = await deliver(event.value);
		expect(eventIdOf(second.result)).toBe(twin.id);
		expect(second.reads).toBe(1);
	});

	it('an event read before its delivery arrived (with another one) is taken once', async () => {
		seed(5000);
		await deliver(logEvent().value);
		const early = logEvent();
		const later = logEvent();
		expect(eventIdOf((await deliver(later.value)).result)).toBe(later.id);
		const { result } = await deliver(early.value);
		expect(eventIdOf(result)).toBe(early.id);
		const again = await deliver(early.value);
		expect(again.result.response.body).toEqual({ received: true, duplicate: true });
	});

	it('a log that grew by thousands since the last delivery: found from the remembered end on', async () => {
		seed(5000);
		await deliver(logEvent().value);
		seed(4000);
		const event = logEvent();
		const { result, reads } = await deliver(event.value);
		expect(eventIdOf(result)).toBe(event.id);
		expect(reads).toBeLessThan(30);
		const next = logEvent();
		expect((await deliver(next.value)).reads).toBe(1);
	});
});

describe('a remembered end that no longer holds: the delivery still finds its event', () => {
	/** Warms the memory on a log of `count` events; answers the last event. */
	async function warmOn(count: number) {
		seed(count - 1);
		const event = logEvent();
		expect(eventIdOf((await deliver(event.value)).result)).toBe(event.id);
		return event;
	}

	it('the log was reset and is shorter now', async () => {
		await warmOn(5000);
		sim.reset();
		taken.clear(); // what this process claimed: the new log numbers its events from 1 again
		seed(30);
		const event = logEvent();
		const { result } = await deliver(event.value);
		expect(eventIdOf(result)).toBe(event.id);
		expect(event.id).toBe(31);
	});

	it('the log was reset and is empty but for the delivered event', async () => {
		await warmOn(300);
		sim.reset();
		taken.clear(); // what this process claimed: the new log numbers its events from 1 again
		const event = logEvent();
		expect(eventIdOf((await deliver(event.value)).result)).toBe(event.id);
	});

	it('the log was reset and rebuilt with other events at the remembered place', async () => {
		const before = await warmOn(2000);
		sim.reset();
		taken.clear(); // what this process claimed: the new log numbers its events from 1 again
		sim.seedEvents(100, 'invoice', 'invoice-updated');
		seed(2500);
		const event = logEvent();
		const { result } = await deliver(event.value);
		expect(eventIdOf(result)).toBe(event.id);
		expect(event.id).toBeGreaterThan(before.id);
	});

	it('the log was reset and refilled the same way up to the remembered end: read on from there', async () => {
		await warmOn(2000);
		sim.reset();
		taken.clear(); // what this process claimed: the new log numbers its events from 1 again
		seed(2000); // the same ids at the same offsets: indistinguishable, and still the log as it is
		seed(40);
		const event = logEvent();
		expect(eventIdOf((await deliver(event.value)).result)).toBe(event.id);
	});

	it('the service lists newest first now', async () => {
		await warmOn(3000);
		sim.setEventOrder('newest-first');
		const event = logEvent();
		expect(eventIdOf((await deliver(event.value)).result)).toBe(event.id);
		sim.setEventOrder('oldest-first');
		const next = logEvent();
		expect(eventIdOf((await deliver(next.value)).result)).toBe(next.id);
	});

	it('pages are capped below the page size asked for (a short page is not the end)', async () => {
		await warmOn(3000);
		sim.onEventsPage((page) => {
			page.length = Math.min(page.length, 7);
		});
		seed(60);
		const event = logEvent();
		const { result } = await deliver(event.value);
		expect(eventIdOf(result)).toBe(event.id);
	});

	it('events inserted between two reads of one delivery are found by the next delivery', async () => {
		await warmOn(3000);
		let inserted = false;
		const late: Array<{ id: number; value: IDataObject }> = [];
		sim.onEventsPage(() => {
			if (inserted) return;
			inserted = true;
			late.push(logEvent());
		});
		const event = logEvent();
		expect(eventIdOf((await deliver(event.value)).result)).toBe(event.id);
		sim.onEventsPage(null);
		expect(eventIdOf((await deliver(late[0].value)).result)).toBe(late[0].id);
	});
});

describe('a burst of deliveries', () => {
	/** Delivers several values at once, as the service does in a burst. */
	const deliverAll = async (values: IDataObject[]) => await Promise.all(values.map(send));

	it('shares its reads of the log: 30 deliveries at once take a few reads, and each finds its own event', async () => {
		seed(500);
		await deliver(logEvent().value); // the end of the log is known from here on
		const events = Array.from({ length: 30 }, () => logEvent());
		sim.clearLog();
		const results = await deliverAll(events.map((event) => event.value));
		expect(results.map(eventIdOf)).toEqual(events.map((event) => event.id));
		expect(sim.log.filter((entry) => entry.path === '/events').length).toBeLessThanOrEqual(3);
	});

	it('a burst after an outage: 300 events logged, then delivered at once oldest first; the reads stop once they hold every waiting delivery’s event', async () => {
		seed(2000);
		await deliver(logEvent().value); // the end of the log is known from here on
		const events = Array.from({ length: 300 }, () => logEvent());
		sim.clearLog();
		// The oldest 60 first: past the newest page, so each read goes back, but not 1,000 events deep.
		const results = await deliverAll(events.slice(0, 60).map((event) => event.value));
		expect(results.map(eventIdOf)).toEqual(events.slice(0, 60).map((event) => event.id));
		const pages = sim.log.filter((entry) => entry.path === '/events');
		// Two reads (the first delivery's, then one for the rest), each of about four pages: the log's
		// newest 300 events and the page before them; reading 1,000 events back would take ten or more each.
		expect(pages.length).toBeLessThanOrEqual(12);
	});

	it('shares its reads of the credential: 30 deliveries at once read it a few times, not 30', async () => {
		seed(100);
		const events = Array.from({ length: 30 }, () => logEvent());
		const load = jest.spyOn(activated.store, 'load');
		try {
			const results = await deliverAll(events.map((event) => event.value));
			expect(results.map(eventIdOf)).toEqual(events.map((event) => event.id));
			const reads = load.mock.calls.filter(([, type]) => type === 'clinicApi').length;
			expect(reads).toBeGreaterThanOrEqual(1);
			expect(reads).toBeLessThanOrEqual(3);
		} finally {
			load.mockRestore();
		}
	});

	it('300 events logged at once, each delivered twice as deliveries trickle in: each event runs once, with its id', async () => {
		seed(100);
		const events = Array.from({ length: 300 }, () => logEvent());
		const ran: unknown[] = [];
		// n8n takes a burst's deliveries a few at a time, in no set order: the newest first here.
		const copies = [...events].reverse().flatMap((event) => [event, event]);
		for (let i = 0; i < copies.length; i += 20) {
			const results = await deliverAll(copies.slice(i, i + 20).map((event) => event.value));
			ran.push(...results.filter((result) => result.workflowData).map(eventIdOf));
		}
		expect(ran.sort((a, b) => Number(a) - Number(b))).toEqual(events.map((event) => event.id));
	}, 120_000);

	it('the log not answering: the delivery runs without an id, and its item says why', async () => {
		await deliver(logEvent().value); // the trigger's subscriptions are checked (once a minute) before the log fails
		const value = { id: 88, first_name: 'Iris', last_name: 'Unplaced' };
		logEvent(value);
		sim.addFault({ kind: 'status', host: 'webhooks', path: '/events', status: 500 });
		const first = await send(value);
		sim.clearFaults();
		expect(eventIdOf(first)).toBeNull();
		expect(first.workflowData?.[0][0].json.note).toMatch(/^The event log could not be read .*no event id/);
	});

	/** Delivers a value that n8n then fails to store: it answers 500 and no run starts. */
	async function refusedByN8n(value: IDataObject) {
		const first = await deliverSigned({ parameters, activated, secret }, value, { fails: () => true });
		expect(first.response.status).toBe(500);
		expect(first.workflowData).toBeUndefined();
	}

	it('a delivery the log could not place that n8n refused to store (500): its copy runs while the log still cannot answer', async () => {
		await deliver(logEvent().value);
		const value = { id: 91, first_name: 'Olga', last_name: 'Refused' };
		logEvent(value);
		sim.addFault({ kind: 'status', host: 'webhooks', path: '/events', status: 500 });
		await refusedByN8n(value);
		const copy = await send(value);
		expect(copy.workflowData).toBeDefined();
		expect(eventIdOf(copy)).toBeNull();
		sim.clearFaults();
	});

	it('a delivery the log could not place that n8n refused to store (500): its copy runs the event, with its id, once the log answers', async () => {
		await deliver(logEvent().value);
		const value = { id: 92, first_name: 'Pablo', last_name: 'Refused' };
		const logged = logEvent(value);
		sim.addFault({ kind: 'status', host: 'webhooks', path: '/events', status: 500 });
		await refusedByN8n(value);
		sim.clearFaults();
		expect(eventIdOf(await send(value))).toBe(logged.id);
	});

	it('stays as strict: in a burst, a redelivery runs nothing and two events with the same payload both run', async () => {
		seed(200);
		const once = logEvent();
		expect(eventIdOf((await deliver(once.value)).result)).toBe(once.id);
		const first = logEvent({ id: 77, first_name: 'Eva', last_name: 'Same' });
		const twin = logEvent({ id: 77, first_name: 'Eva', last_name: 'Same' });
		const results = await deliverAll([once.value, first.value, twin.value]);
		expect(results[0].workflowData).toBeUndefined();
		expect(results[0].response.body).toEqual({ received: true, duplicate: true });
		expect(results.slice(1).map(eventIdOf).sort()).toEqual([first.id, twin.id].sort());
	});
});
