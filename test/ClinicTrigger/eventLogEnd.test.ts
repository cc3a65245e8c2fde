/**
 * The duplicate check's reads of the event log per delivery (nodes/shared/eventLog.ts
 * `EventLog.tail`, `EventLog.readSince`): on an oldest-first log the process remembers where
 * the log ended and its newest events, and reads only what was logged since, one request
 * per delivery instead of a search over the whole log; when the log no longer looks as
 * remembered (shorter, reset, reordered, capped pages) the delivery is still matched to
 * its own logged event. Deliveries go through
 * n8n-core's WebhookContext; the log and the request count are the simulator's.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { EVENT_LOG_CHECK_MS } from '../../nodes/ClinicTrigger/eventResolution';
import { forgetEmittedEvents } from '../../nodes/ClinicTrigger/payloadRuns';
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

/** Logs a patient-created event with a value of its own (as the service does before delivering it). */
function logEvent(value: IDataObject = { id: 10_000 + ++counter, first_name: 'Ana', last_name: `López ${counter}` }) {
	sim.seedEvents(1, 'patient', 'patient-created', () => value);
	return { id: sim.events().at(-1)!.id, value };
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

	it('an event read before its delivery arrived (with another one) is taken from what was read, without reading again, once', async () => {
		seed(5000);
		await deliver(logEvent().value);
		const early = logEvent();
		const later = logEvent();
		expect(eventIdOf((await deliver(later.value)).result)).toBe(later.id);
		const { result, reads } = await deliver(early.value);
		expect(eventIdOf(result)).toBe(early.id);
		expect(reads).toBe(0);
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
		forgetEmittedEvents();
		seed(30);
		const event = logEvent();
		const { result } = await deliver(event.value);
		expect(eventIdOf(result)).toBe(event.id);
		expect(event.id).toBe(31);
	});

	it('the log was reset and is empty but for the delivered event', async () => {
		await warmOn(300);
		sim.reset();
		forgetEmittedEvents();
		const event = logEvent();
		expect(eventIdOf((await deliver(event.value)).result)).toBe(event.id);
	});

	it('the log was reset and rebuilt with other events at the remembered place', async () => {
		const before = await warmOn(2000);
		sim.reset();
		forgetEmittedEvents();
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
		forgetEmittedEvents();
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

	it('30 deliveries answered in time share one timer for their check deadline, not one each', async () => {
		seed(100);
		await deliver(logEvent().value);
		const events = Array.from({ length: 30 }, () => logEvent());
		const timers = jest.spyOn(global, 'setTimeout');
		try {
			const results = await deliverAll(events.map((event) => event.value));
			expect(results.map(eventIdOf)).toEqual(events.map((event) => event.id));
			// The check's deadline is EVENT_LOG_CHECK_MS after each delivery; other timers are far shorter or longer.
			const checkTimers = timers.mock.calls.filter(([, ms]) => typeof ms === 'number' && ms > EVENT_LOG_CHECK_MS - 2000 && ms <= EVENT_LOG_CHECK_MS);
			expect(checkTimers.length).toBeGreaterThanOrEqual(1);
			expect(checkTimers.length).toBeLessThanOrEqual(2);
		} finally {
			timers.mockRestore();
		}
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

	it('a delivery the log could not place ran without an id: its copy, placed later, runs nothing; a second event with that payload still runs', async () => {
		await deliver(logEvent().value); // the trigger's subscriptions are checked (once a minute) before the log fails
		const value = { id: 88, first_name: 'Iris', last_name: 'Unplaced' };
		logEvent(value);
		sim.addFault({ kind: 'status', host: 'webhooks', path: '/events', status: 500 });
		const first = await send(value);
		expect(first.workflowData).toBeDefined();
		expect(eventIdOf(first)).toBeNull();
		sim.clearFaults();
		const copy = await send(value);
		expect(copy.workflowData).toBeUndefined();
		expect(copy.response.body).toEqual({ received: true, duplicate: true });
		const second = logEvent(value);
		expect(eventIdOf(await send(value))).toBe(second.id);
	});

	it('a copy of a delivery that just ran, arriving while the log cannot answer, runs nothing; another payload still runs', async () => {
		const once = logEvent();
		expect(eventIdOf((await deliver(once.value)).result)).toBe(once.id);
		sim.addFault({ kind: 'status', host: 'webhooks', path: '/events', status: 500 });
		const copy = await send(once.value);
		expect(copy.workflowData).toBeUndefined();
		expect(copy.response.body).toEqual({ received: true, duplicate: true });
		const other = logEvent();
		const unplaced = await send(other.value);
		expect(unplaced.workflowData).toBeDefined();
		expect(eventIdOf(unplaced)).toBeNull();
		sim.clearFaults();
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

	/**
	 * A value the log cannot place runs without an id; a copy arrives before n8n answered that
	 * run's delivery (the log answering again meanwhile or not), and another copy after it.
	 */
	async function copiesAroundAnUnansweredRun(value: IDataObject, logAnswersMeanwhile: boolean) {
		await deliver(logEvent().value);
		logEvent(value);
		sim.addFault({ kind: 'status', host: 'webhooks', path: '/events', status: 500 });
		let meanwhile: DeliveryResult | undefined;
		const first = await deliverSigned({ parameters, activated, secret }, value, {
			whileStoring: async () => {
				if (logAnswersMeanwhile) sim.clearFaults();
				meanwhile = await send(value);
			},
		});
		const after = await send(value);
		sim.clearFaults();
		return { first, meanwhile: meanwhile!, after };
	}

	it('a copy arriving while n8n has not answered a run the log could not place: 503 with Retry-After, then a repeat once it answered', async () => {
		const { first, meanwhile, after } = await copiesAroundAnUnansweredRun({ id: 93, first_name: 'Rita', last_name: 'Pending' }, false);
		expect(eventIdOf(first)).toBeNull();
		expect(meanwhile.response.status).toBe(503);
		expect(meanwhile.response.headers).toMatchObject({ 'retry-after': '5' });
		expect(meanwhile.workflowData).toBeUndefined();
		expect(after.workflowData).toBeUndefined();
		expect(after.response.body).toEqual({ received: true, duplicate: true });
	});

	it('a copy the log places while n8n has not answered the run that stood for its event: 503, then a repeat once it answered', async () => {
		const { first, meanwhile, after } = await copiesAroundAnUnansweredRun({ id: 94, first_name: 'Sara', last_name: 'Pending' }, true);
		expect(eventIdOf(first)).toBeNull();
		expect(meanwhile.response.status).toBe(503);
		expect(meanwhile.workflowData).toBeUndefined();
		expect(after.workflowData).toBeUndefined();
		expect(after.response.body).toEqual({ received: true, duplicate: true });
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
