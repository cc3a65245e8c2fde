/**
 * The Clinic Event Log Trigger against the simulator, polled through n8n-core's real
 * PollContext: every event exactly once, none skipped, in either listing order.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { CredentialStore, forgetProcessMemory, runPoll } from '../helpers';
import type { PollResult } from '../helpers';
import { startSimulator } from '../simulator';
import type { EventOrder, EventParamsMode, Simulator } from '../simulator/types';
import { integrationCredentials } from '../Clinic/support';

let sim: Simulator;
let store: CredentialStore;

beforeAll(async () => {
	sim = await startSimulator();
});
afterAll(async () => {
	await sim.close();
});
beforeEach(() => {
	sim.reset();
	forgetProcessMemory();
	store = new CredentialStore();
	store.add('clinicApi', integrationCredentials(sim));
});
afterEach(() => {
	expect(sim.internalErrors()).toEqual([]);
});

const finished = 'consultation:consultation-finished';

function parameters(extra: INodeParameters = {}): INodeParameters {
	return { authentication: 'clinicApi', events: [finished], ...extra };
}

/** A workflow that polls on, each poll starting from what n8n saved after the one before. */
class Poller {
	staticData: IDataObject = {};
	readonly emitted: number[] = [];
	polls = 0;

	constructor(private readonly params: INodeParameters) {}

	async activate(): Promise<PollResult> {
		return await this.poll(true);
	}

	async poll(activation = false): Promise<PollResult> {
		const result = await runPoll({ parameters: this.params, store, staticData: this.staticData, activation });
		if (result.error) throw result.error;
		this.polls++;
		this.staticData = result.staticData;
		for (const item of result.items ?? []) this.emitted.push(item.json.eventId as number);
		return result;
	}

	/** Polls until a poll emits nothing. */
	async drain(maxPolls = 50): Promise<void> {
		for (let i = 0; i < maxPolls; i++) {
			const result = await this.poll();
			if (!result.items) return;
		}
		throw new Error('still emitting after many polls');
	}
}

async function emitFinished(count: number): Promise<number[]> {
	const ids: number[] = [];
	for (let i = 0; i < count; i++) ids.push((await sim.emit('consultation', 'consultation-finished', { id: 1000 + i })).id);
	return ids;
}

function range(from: number, to: number): number[] {
	return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

describe.each(['oldest-first', 'newest-first'] as EventOrder[])('Event Log Trigger, service listing %s', (order) => {
	beforeEach(() => sim.setEventOrder(order));

	test('first activation starts from now; each new event is emitted once, oldest first, with the Clinic Trigger fields', async () => {
		sim.seedEvents(30, 'consultation', 'consultation-finished');
		const poller = new Poller(parameters());
		const activation = await poller.activate();
		expect(activation.items).toBeUndefined();
		expect(activation.saved).toBe(true);

		const first = await emitFinished(3);
		const result = await poller.poll();
		expect(result.items?.map((item) => item.json)).toEqual(
			first.map((id, i) => ({
				event: 'consultation-finished',
				topic: 'clinic-38729.consultation',
				eventId: id,
				createdAt: expect.any(String),
				value: { id: 1000 + i },
			})),
		);
		expect((await poller.poll()).items).toBeUndefined();
		const second = await emitFinished(2);
		await poller.poll();
		expect(poller.emitted).toEqual([...first, ...second]);
	});

	test('activation over a log of 10,000 events reads a few pages, not the whole log', async () => {
		sim.seedEvents(10_000, 'consultation', 'consultation-finished');
		const poller = new Poller(parameters());
		sim.clearLog();
		await poller.activate();
		const activationReads = sim.log.filter((entry) => entry.path === '/events').length;
		expect(activationReads).toBeLessThanOrEqual(40);
		const ids = await emitFinished(2);
		sim.clearLog();
		await poller.poll();
		expect(poller.emitted).toEqual(ids);
		// The next polls start near the end of the log (oldest first) or at its top (newest first).
		expect(sim.log.filter((entry) => entry.path === '/events').length).toBeLessThanOrEqual(order === 'oldest-first' ? 4 : 3);
	});

	test('only the chosen events: other names and topics are never emitted', async () => {
		const poller = new Poller(parameters({ events: [finished, 'patient:patient-created'] }));
		await poller.activate();
		await sim.emit('consultation', 'consultation-updated', { id: 1 });
		const a = (await sim.emit('patient', 'patient-created', { id: 2 })).id;
		await sim.emit('patient', 'patient-updated', { id: 3 });
		const b = (await sim.emit('consultation', 'consultation-finished', { id: 4 })).id;
		const result = await poller.poll();
		expect(result.items?.map((item) => [item.json.eventId, item.json.event])).toEqual([
			[a, 'patient-created'],
			[b, 'consultation-finished'],
		]);
		const requests = sim.log.filter((entry) => entry.path === '/events');
		for (const request of requests) expect(request.body).toMatchObject({ topic: expect.stringMatching(/^clinic-38729\./) });
	});

	test('events inserted between two page requests and during a poll: none twice, none skipped', async () => {
		const poller = new Poller(parameters());
		sim.seedEvents(5, 'consultation', 'consultation-finished');
		await poller.activate();
		sim.seedEvents(250, 'consultation', 'consultation-finished');
		let inserted = 0;
		sim.onEventsPage(() => {
			// Three new events after every page the trigger reads, for the first twenty pages.
			if (inserted < 60) {
				sim.seedEvents(3, 'consultation', 'consultation-finished');
				inserted += 3;
			}
		});
		await poller.drain();
		sim.onEventsPage(null);
		const all = sim.events().map((event) => event.id);
		expect(poller.emitted).toEqual(range(6, all.length));
		expect(inserted).toBe(60);
	});

	test('a service that caps its pages below the page size: every event once, the end found by the one rule', async () => {
		const poller = new Poller(parameters());
		await poller.activate();
		sim.onEventsPage((page) => {
			page.length = Math.min(page.length, 7);
		});
		const first = (await sim.emit('consultation', 'consultation-finished', { id: 1 })).id;
		sim.seedEvents(40, 'consultation', 'consultation-finished');
		await poller.drain();
		sim.onEventsPage(null);
		expect(poller.emitted).toEqual(range(first, first + 40));
	});

	test('a restart between polls (n8n reloads the saved cursor) repeats and skips nothing', async () => {
		const poller = new Poller(parameters());
		await poller.activate();
		const first = await emitFinished(4);
		await poller.poll();
		// n8n restarts: a new process, the same saved static data.
		const restarted = new Poller(parameters());
		restarted.staticData = poller.staticData;
		const second = await emitFinished(3);
		await restarted.poll();
		await restarted.poll();
		expect([...poller.emitted, ...restarted.emitted]).toEqual([...first, ...second]);
	});

	test('an empty poll is not saved by n8n: the next one after a restart still finds what came after', async () => {
		const poller = new Poller(parameters());
		await poller.activate();
		const empty = await poller.poll();
		expect(empty.saved).toBe(false);
		const ids = await emitFinished(2);
		await poller.poll();
		expect(poller.emitted).toEqual(ids);
	});

	test('a backlog of 10,000 events: oldest first in chunks of Max Events Per Poll, each exactly once', async () => {
		const poller = new Poller(parameters({ options: { maxEventsPerPoll: 4000 } }));
		await poller.activate();
		sim.seedEvents(10_000, 'consultation', 'consultation-finished');
		const sizes: number[] = [];
		for (;;) {
			const result = await poller.poll();
			if (!result.items) break;
			sizes.push(result.items.length);
		}
		expect(sizes).toEqual([4000, 4000, 2000]);
		expect(poller.emitted).toEqual(range(1, 10_000));
	}, 60_000);

	test('Start From an event id and from a date backfill on purpose; changing it starts again', async () => {
		sim.seedEvents(20, 'consultation', 'consultation-finished');
		const byId = new Poller(parameters({ startFrom: 'eventId', startEventId: 15 }));
		await byId.activate();
		await byId.poll();
		expect(byId.emitted).toEqual(range(15, 20));

		const events = sim.events();
		const byDate = new Poller(parameters({ startFrom: 'date', startDate: events[9].created_at }));
		await byDate.activate();
		await byDate.poll();
		expect(byDate.emitted).toEqual(range(10, 20));

		// The same workflow, Start From changed to an earlier id: it reads from there again.
		const changed = new Poller(parameters({ startFrom: 'eventId', startEventId: 18 }));
		changed.staticData = byId.staticData;
		await changed.poll();
		expect(changed.emitted).toEqual([18, 19, 20]);
		// Unchanged, an activation again (deactivate/activate) carries on where it was.
		const again = new Poller(parameters({ startFrom: 'eventId', startEventId: 18 }));
		again.staticData = changed.staticData;
		await again.activate();
		const later = await emitFinished(1);
		await again.poll();
		expect(again.emitted).toEqual(later);
	});

	test('Fetch Test Event shows the latest matching event and does not move the cursor', async () => {
		const poller = new Poller(parameters());
		await poller.activate();
		const ids = await emitFinished(3);
		await sim.emit('patient', 'patient-created', { id: 9 });
		const manual = await runPoll({ parameters: parameters(), store, staticData: poller.staticData, mode: 'manual' });
		expect(manual.error).toBeUndefined();
		expect(manual.items?.map((item) => item.json.eventId)).toEqual([ids[2]]);
		expect(manual.saved).toBe(false);
		expect(manual.staticData).toEqual(poller.staticData);
		await poller.poll();
		expect(poller.emitted).toEqual(ids);
	});
});

describe('Event Log Trigger: where GET /events parameters are read', () => {
	test.each(['body', 'query', 'both'] as EventParamsMode[])('a service reading the %s: filters and paging work', async (mode) => {
		sim.setEventParams(mode);
		const poller = new Poller(parameters());
		await poller.activate();
		sim.seedEvents(150, 'patient', 'patient-updated');
		sim.seedEvents(120, 'consultation', 'consultation-finished');
		await poller.drain();
		expect(poller.emitted).toEqual(range(151, 270));
	});
});

describe('Event Log Trigger: output and errors', () => {
	test('Include Delivery Logs adds the attempts without their shared secret', async () => {
		const poller = new Poller(parameters({ options: { includeDeliveryLogs: true } }));
		await poller.activate();
		const [id] = await emitFinished(1);
		// A delivery attempt as the service records it, with the subscription's secret.
		const record = sim.events().find((event) => event.id === id)!;
		record.logs.push({
			id: 1,
			target_url: 'https://n8n.example.test/webhook/x/webhook',
			authentication_data: { secret: 'subscription-secret-123' },
			request: '{}',
			response: 'ok',
			event_id: String(id),
			response_code: 200,
			retries_left: 3,
			created_at: record.created_at,
		});
		const result = await poller.poll();
		expect(result.items?.[0].json.logs).toEqual([
			expect.objectContaining({ target_url: 'https://n8n.example.test/webhook/x/webhook', response_code: 200, hasSecret: true, authentication_data: {} }),
		]);
		expect(JSON.stringify(result.items)).not.toContain('subscription-secret-123');
	});

	test('an access token the service no longer accepts is renewed once, and the GET body still arrives', async () => {
		const poller = new Poller(parameters());
		await poller.activate();
		const ids = await emitFinished(2);
		sim.expireAccessTokens();
		sim.clearLog();
		await poller.poll();
		expect(poller.emitted).toEqual(ids);
		expect(sim.tokenRequests()).toBe(1);
		const reads = sim.log.filter((entry) => entry.path === '/events');
		expect(reads[0].status).toBe(401);
		expect(reads.slice(1).every((entry) => entry.status === 200 && (entry.body as { topic?: string } | null)?.topic)).toBe(true);
	});

	test('Fetch Test Event with no matching event says what to do', async () => {
		const manual = await runPoll({ parameters: parameters(), store, mode: 'manual' });
		expect(manual.error?.message).toMatch(/No event of the chosen kinds/);
	});

	test('no event chosen, or a bad Max Events Per Poll -> a clear error naming the parameter', async () => {
		const none = await runPoll({ parameters: parameters({ events: [] }), store });
		expect(none.error?.message).toMatch(/"Events"/);
		const bad = await runPoll({ parameters: parameters({ options: { maxEventsPerPoll: 0 } }), store, staticData: {} });
		expect(bad.error?.message).toMatch(/Max Events Per Poll/);
	});
});
