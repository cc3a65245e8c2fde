/**
 * A trigger that has a stale subscription resubscribes on the next delivery where it can (subscribes again;
 * the events missed meanwhile are in the log past its cursor and run once) and fails that
 * delivery, saying what happened, where it cannot. Real deliveries from the simulator through n8n-core.
 */
import { randomBytes } from 'node:crypto';

import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { ANSWER_WITHIN_MS } from '../../nodes/ClinicTrigger/newEvents';
import { activateTrigger, deliverWebhook } from '../helpers/trigger';
import { signDelivery, startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import { PATIENT_CREATED, credentialsFor, live, startReceiver } from './support';
import type { ReceiverState } from './support';

const PATIENT_UPDATED = 'patient:patient-updated';

let sim: Simulator;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const state: ReceiverState = { parameters: {}, staticData: {} };

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true, deliveryRetryDelayMs: 20 });
	receiver = await startReceiver(state);
});

afterAll(async () => {
	await receiver.close();
	await sim.close();
});

beforeEach(() => {
	sim.reset();
	forgetProcessMemory();
	receiver.results.length = 0;
});

async function activate(events: string[], service = sim) {
	state.parameters = { authentication: 'clinicApi', events, options: { allowInsecureUrl: true } };
	const activated = await activateTrigger({ parameters: state.parameters, credentials: credentialsFor(service), webhookUrl: receiver.webhookUrl() });
	if (activated.error) throw activated.error;
	state.store = activated.store;
	state.staticData = activated.staticData;
}

const newSigningKey = () => state.store!.edit('clinicApi', { webhookSigningKey: randomBytes(32).toString('hex') });
/** The items of the runs started (a delivery that failed starts a run that fails at once: not counted). */
const runs = () => receiver.executions().filter((result) => !result.error);
const runItems = () => runs().flatMap((result) => result.workflowData![0].map((item) => item.json));

describe('a new signing key in the credential', () => {
	it('the next delivery subscribes again (the stale subscription removed) and runs the event once', async () => {
		await activate([PATIENT_UPDATED]);
		const [stale] = live(sim);
		newSigningKey();
		const missed = await sim.emit('patient', 'patient-updated', { id: 1 });

		expect(missed.logs.map((log) => log.response_code)).toEqual([200]);
		expect(runItems()).toEqual([
			expect.objectContaining({
				eventId: missed.id,
				value: { id: 1 },
			}),
		]);
		expect(live(sim)).toHaveLength(1);
		expect(live(sim)[0].id).not.toBe(stale.id);

		// Resubscribed: the next event is verified with the new secret, not caught up again.
		const next = await sim.emit('patient', 'patient-updated', { id: 2 });
		expect(runItems().map((json) => json.eventId)).toEqual([missed.id, next.id]);
	});

	it(`a key replaced between deliveries: the old key verifies for at most ${ANSWER_WITHIN_MS / 1000} s (the credential kept in memory), then the trigger resubscribes`, async () => {
		await activate([PATIENT_UPDATED]);
		const first = await sim.emit('patient', 'patient-updated', { id: 1 });
		newSigningKey();
		// Within the bound the kept credential still holds the old key: an ordinary run.
		const within = await sim.emit('patient', 'patient-updated', { id: 2 });
		expect(runItems().map((json) => json.eventId)).toEqual([first.id, within.id]);

		// Past the bound the credential is read again: the old key no longer verifies.
		const now = Date.now();
		const clock = jest.spyOn(Date, 'now').mockImplementation(() => now + ANSWER_WITHIN_MS + 1);
		try {
			const after = await sim.emit('patient', 'patient-updated', { id: 3 });
			expect(runItems().slice(2).map((json) => json.eventId)).toEqual([after.id]);
			expect(live(sim)).toHaveLength(1);
		} finally {
			clock.mockRestore();
		}
	});

	it('the credential saved anew with a new key (its session gone): the sign-in keeps the new key, and the trigger resubscribes', async () => {
		await activate([PATIENT_UPDATED]);
		const key = randomBytes(32).toString('hex');
		state.store!.edit('clinicApi', { webhookSigningKey: key, accessToken: '', refreshToken: '' });
		const missed = await sim.emit('patient', 'patient-updated', { id: 1 });

		expect(state.store!.find('clinicApi').data.webhookSigningKey).toBe(key);
		expect(runItems().map((json) => json.eventId)).toEqual([missed.id]);
	});

	it('a delivery forged with a key it does not know resubscribes nothing while the key is current: 401, not even a look at the subscriptions', async () => {
		await activate([PATIENT_UPDATED]);
		const [subscription] = live(sim);
		sim.clearLog();
		const answer = await fetch(subscription.url, {
			method: 'POST',
			headers: { 'content-type': 'application/json', signature: 'f'.repeat(64) },
			body: JSON.stringify({ value: { id: 1 } }),
		});
		expect(answer.status).toBe(401);
		expect(receiver.executions()).toEqual([]);
		// Unverified requests never make the trigger list its subscriptions (only verified ones look).
		expect(sim.log.filter((entry) => entry.path === '/webhooks')).toEqual([]);
	});

	it('the service refusing the new subscription (no rights): the delivery fails with what happened and what to do, no secret in it', async () => {
		await activate([PATIENT_UPDATED]);
		newSigningKey();
		sim.addFault({ kind: 'status', status: 403, host: 'webhooks', method: 'POST', path: '/webhooks' });
		await sim.emit('patient', 'patient-updated', { id: 1 });

		const [failed] = receiver.results;
		expect(failed.error?.message).toMatch(
			/^The Clinic Trigger cannot receive events: the credential's webhook signing key changed.*Subscribing again failed/,
		);
		expect(failed.error?.constructor.name).toBe('NodeOperationError');
		expect(runs()).toEqual([]);
		const secrets = sim.subscriptions().map((s) => s.authentication_data.secret);
		for (const secret of secrets) expect(JSON.stringify(failed.error)).not.toContain(secret);
	});
});

it('a test run ("Listen for test event") never resubscribes: n8n gives it the production address, where a subscription would outlive the test', async () => {
	await activate([PATIENT_UPDATED]);
	const [stale] = live(sim);
	newSigningKey();
	sim.clearLog();
	const raw = Buffer.from(JSON.stringify({ value: { id: 3 } }));
	const delivered = await deliverWebhook({
		parameters: state.parameters,
		store: state.store,
		staticData: state.staticData,
		webhookUrl: receiver.webhookUrl(),
		mode: 'manual',
		rawBody: raw,
		headers: { 'content-type': 'application/json', signature: signDelivery(stale.authentication_data.secret, raw) },
		query: { event: PATIENT_UPDATED },
	});
	expect(delivered.error).toBeUndefined();
	expect(live(sim).map((subscription) => subscription.id)).toEqual([stale.id]);
	expect(sim.log.filter((entry) => entry.host === 'webhooks' && entry.method === 'POST')).toEqual([]);
});

describe('a subscription the service stopped', () => {
	it.each(['disable', 'delete'] as const)(
		'%s: the next delivery of another event replaces it and runs the missed events once, before its own',
		async (how) => {
			await activate([PATIENT_UPDATED, PATIENT_CREATED]);
			const updated = live(sim).find((s) => s.event_name === 'patient-updated')!;
			sim.stopSubscription(updated.id, how);
			const missed = [await sim.emit('patient', 'patient-updated', { id: 1 }), await sim.emit('patient', 'patient-updated', { id: 2 })];
			const created = await sim.emit('patient', 'patient-created', { id: 3 });

			expect(runItems().map((json) => json.eventId)).toEqual([missed[0].id, missed[1].id, created.id]);
			expect(sim.subscriptions().find((s) => s.id === updated.id)?.deleted_at).not.toBeNull();
			expect(live(sim).map((s) => s.event_name).sort()).toEqual(['patient-created', 'patient-updated']);

			const heard = await sim.emit('patient', 'patient-updated', { id: 4 });
			expect(heard.logs.map((log) => log.response_code)).toEqual([200]);
			expect(runItems().filter((json) => json.eventId === heard.id)).toHaveLength(1);
		},
	);

	it('with times as a Rails service in Mexico renders them (events at -06:00 with milliseconds, the subscription in UTC): the missed events are caught up', async () => {
		const mexico = await startSimulator({ allowHttpCallbacks: true, deliveryRetryDelayMs: 20, timestamps: 'mexico' });
		try {
			await activate([PATIENT_UPDATED, PATIENT_CREATED], mexico);
			// Its subscription time names a whole second: the events come after that second.
			await new Promise((resolve) => setTimeout(resolve, 1010 - (Date.now() % 1000)));
			const updated = live(mexico).find((s) => s.event_name === 'patient-updated')!;
			expect(updated.created_at).toMatch(/T\d\d:\d\d:\d\dZ$/);
			mexico.stopSubscription(updated.id, 'disable');
			const missed = await mexico.emit('patient', 'patient-updated', { id: 1 });
			expect(missed.created_at).toMatch(/\.\d{3}-06:00$/);
			const created = await mexico.emit('patient', 'patient-created', { id: 3 });
			expect(runItems().map((json) => json.eventId)).toEqual([missed.id, created.id]);
		} finally {
			await mexico.close();
		}
	});

	it('its subscriptions are listed at most once a minute per trigger', async () => {
		await activate([PATIENT_UPDATED, PATIENT_CREATED]);
		sim.clearLog();
		await sim.emit('patient', 'patient-created', { id: 1 });
		await sim.emit('patient', 'patient-created', { id: 2 });
		expect(sim.log.filter((entry) => entry.method === 'GET' && entry.path === '/webhooks')).toHaveLength(1);
	});
});

describe('a trigger that never goes silent', () => {
	const forge = async (url: string, id: number) =>
		await fetch(url, {
			method: 'POST',
			headers: { 'content-type': 'application/json', signature: randomBytes(32).toString('hex') },
			body: JSON.stringify({ value: { id } }),
		});
	const subscribes = () => sim.log.filter((entry) => entry.method === 'POST' && entry.path === '/webhooks').length;

	it('the service answering 500 to the one subscribe while resubscribing: the working subscription stays, and the next delivery resubscribes', async () => {
		await activate([PATIENT_UPDATED, PATIENT_CREATED]);
		const updated = live(sim).find((s) => s.event_name === 'patient-updated')!;
		const created = live(sim).find((s) => s.event_name === 'patient-created')!;
		sim.stopSubscription(updated.id, 'disable');
		const missed = await sim.emit('patient', 'patient-updated', { id: 1 });
		sim.addFault({ kind: 'status', status: 500, host: 'webhooks', method: 'POST', path: '/webhooks', count: 1 });
		const heard = await sim.emit('patient', 'patient-created', { id: 2 });

		// The first try failed (nothing removed), the service's retry resubscribed and ran both.
		expect(heard.logs.map((log) => log.response_code)).toEqual([500, 200]);
		expect(receiver.results[0].error?.message).toMatch(/^The Clinic Trigger cannot receive events: the clinic service disabled/);
		expect(String((receiver.results[0].error as { description?: string }).description)).toMatch(/left in place, and the next delivery to this trigger subscribes again/);
		expect(live(sim).map((s) => s.id)).toContain(created.id);
		expect(live(sim).map((s) => s.event_name).sort()).toEqual(['patient-created', 'patient-updated']);
		expect(runItems().map((json) => json.eventId)).toEqual([missed.id, heard.id]);
		const next = await sim.emit('patient', 'patient-updated', { id: 3 });
		expect(runItems().map((json) => json.eventId)).toEqual([missed.id, heard.id, next.id]);
	});

	it('subscribing keeps failing: one delivery a minute fails saying so, the working subscription\'s events run meanwhile', async () => {
		await activate([PATIENT_UPDATED, PATIENT_CREATED]);
		const updated = live(sim).find((s) => s.event_name === 'patient-updated')!;
		sim.stopSubscription(updated.id, 'disable');
		sim.addFault({ kind: 'status', status: 500, host: 'webhooks', method: 'POST', path: '/webhooks' });
		const first = await sim.emit('patient', 'patient-created', { id: 1 });
		const second = await sim.emit('patient', 'patient-created', { id: 2 });
		expect(first.logs.map((log) => log.response_code)).toEqual([500, 200]);
		expect(second.logs.map((log) => log.response_code)).toEqual([200]);
		expect(receiver.results.filter((result) => result.error)).toHaveLength(1);
		expect(runItems().map((json) => json.eventId)).toEqual([first.id, second.id]);
	});

	it('30 forged deliveries at once while the key is replaced: one resubscribe, no forged body runs', async () => {
		await activate([PATIENT_UPDATED]);
		const [subscription] = live(sim);
		newSigningKey();
		sim.clearLog();
		const answers = await Promise.all(Array.from({ length: 30 }, async (_, i) => await forge(subscription.url, 100 + i)));
		expect(subscribes()).toBe(1);
		expect(answers.filter((answer) => answer.status === 401)).toHaveLength(29);
		expect(runItems()).toEqual([]);
	});

	it('30 forged deliveries one after another while the key is replaced and subscribing fails: at most one resubscribe a minute', async () => {
		await activate([PATIENT_UPDATED]);
		const [subscription] = live(sim);
		newSigningKey();
		sim.addFault({ kind: 'status', status: 500, host: 'webhooks', method: 'POST', path: '/webhooks' });
		sim.clearLog();
		for (let i = 0; i < 30; i++) await forge(subscription.url, 200 + i);
		expect(subscribes()).toBe(1);
		expect(runItems()).toEqual([]);
	});

	it('a burst of real deliveries after a key change: one resubscribe, each event runs once', async () => {
		await activate([PATIENT_UPDATED]);
		newSigningKey();
		sim.clearLog();
		const emitted = await Promise.all([1, 2, 3, 4, 5, 6].map(async (id) => await sim.emit('patient', 'patient-updated', { id })));
		await sim.deliveriesSettled();
		expect(subscribes()).toBe(1);
		expect(runItems().map((json) => json.eventId).sort()).toEqual(emitted.map((record) => record.id).sort());
	});
});
