/**
 * The trigger's subscriptions follow the workflow's life, against the simulator's
 * webhook service, through n8n-core's HookContext (test/helpers/trigger.ts).
 */
import { randomBytes } from 'node:crypto';

import { UserError } from 'n8n-workflow';
import type { IDataObject } from 'n8n-workflow';

import { activateTrigger, deliverWebhook, runTriggerHook, TRIGGER_WEBHOOK_ID } from '../helpers/trigger';
import type { HookResult, TriggerOptions } from '../helpers/trigger';
import { SecretCollector, findLeaks } from '../helpers/secrets';
import { signingKeyId, subscriptionSecret } from '../../nodes/ClinicTrigger/signature';
import { signDelivery, startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import {
	CONSULTATION_FINISHED,
	PATIENT_CREATED,
	SCHEDULE_CREATE,
	TWR_JOINED,
	credentialsFor,
	live,
	logNow,
	logTry,
	serviceCall,
	startRefusingProxy,
} from './support';

let sim: Simulator;

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true });
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => sim.reset());

async function waitUntil(condition: () => boolean, timeoutMs = 5000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > deadline) throw new Error('condition not met in time');
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
}

const THREE = [PATIENT_CREATED, CONSULTATION_FINISHED, SCHEDULE_CREATE];
const PRODUCTION_URL = `https://n8n.example.test/webhook/${TRIGGER_WEBHOOK_ID}/webhook`;

function options(overrides: Partial<TriggerOptions> = {}): TriggerOptions {
	return {
		parameters: { authentication: 'clinicApi', events: THREE, options: {} },
		credentials: credentialsFor(sim),
		...overrides,
	};
}

/** The secrets of the subscriptions stored in static data (as the service holds them), plus the credential's. */
function secretsOf(result: HookResult): string[] {
	const ids = Object.values(subscriptionsIn(result.nodeStaticData)).map((entry) => (entry as IDataObject).id);
	const subscriptionSecrets = sim
		.subscriptions()
		.filter((s) => ids.includes(s.id))
		.map((s) => s.authentication_data.secret);
	return [...new SecretCollector().addFromStore(result.store).list(), ...subscriptionSecrets];
}

/** After deactivation: no subscription left, the cursor kept with when it stopped (an activation within a minute goes on from it). */
function expectStoppedCursorOnly(nodeStaticData: IDataObject): void {
	expect(subscriptionsIn(nodeStaticData)).toEqual({});
	expect((nodeStaticData.cursor as IDataObject).stoppedAt).toBeGreaterThan(Date.now() - 60_000);
}

/** The trigger's stored subscriptions: its static data but the event-log cursor. */
function subscriptionsIn(nodeStaticData: IDataObject): IDataObject {
	const { cursor: _cursor, ...subscriptions } = nodeStaticData;
	return subscriptions;
}

function nodeData(staticData: IDataObject): IDataObject {
	return subscriptionsIn((staticData['node:Clinic Trigger'] as IDataObject | undefined) ?? {});
}

describe('activation (create)', () => {
	it('N events -> N subscriptions, each with its own secret, ?event= address and full topic', async () => {
		const activated = await activateTrigger(options());
		expect(activated.error).toBeUndefined();
		expect(activated.created).toBe(true);
		expect(activated.result).toBe(true);

		const subscriptions = live(sim);
		expect(subscriptions).toHaveLength(3);
		expect(subscriptions.map((s) => [s.event_topic, s.event_name, s.url])).toEqual([
			['clinic-38729.patient', 'patient-created', `${PRODUCTION_URL}?event=patient%3Apatient-created`],
			['clinic-38729.consultation', 'consultation-finished', `${PRODUCTION_URL}?event=consultation%3Aconsultation-finished`],
			[
				'clinic-38729.consultation-schedule',
				'consultation-schedule-create',
				`${PRODUCTION_URL}?event=consultation-schedule%3Aconsultation-schedule-create`,
			],
		]);
		const secrets = subscriptions.map((s) => s.authentication_data.secret);
		expect(new Set(secrets).size).toBe(3);
		for (const secret of secrets) expect(secret).toMatch(/^[0-9a-f]{64}$/);

		// Static data holds id, topic and key id per event, and n8n saves it; no secret. Each
		// secret is derived from the signing key kept in the (encrypted) credential.
		expect(activated.staticDataChanged).toBe(true);
		const signingKey = String(activated.store.data('clinicApi').webhookSigningKey);
		expect(signingKey).toMatch(/^[0-9a-f]{64}$/);
		const entry = (id: number, topic: string) => ({ id, topic, keyId: signingKeyId(signingKey) });
		expect(activated.nodeStaticData).toEqual({
			[PATIENT_CREATED]: entry(subscriptions[0].id, 'clinic-38729.patient'),
			[CONSULTATION_FINISHED]: entry(subscriptions[1].id, 'clinic-38729.consultation'),
			[SCHEDULE_CREATE]: entry(subscriptions[2].id, 'clinic-38729.consultation-schedule'),
			// Where the log ends now: the first delivery runs what is logged after it.
			cursor: { floor: 0, seen: [], start: 'now', offsets: {} },
		});
		for (const [key, stored] of Object.entries(subscriptionsIn(activated.nodeStaticData))) {
			const { id } = stored as { id: number };
			expect(subscriptionSecret(signingKey, TRIGGER_WEBHOOK_ID, key)).toBe(subscriptions.find((s) => s.id === id)!.authentication_data.secret);
		}
		for (const secret of secrets) expect(JSON.stringify(activated.staticData)).not.toContain(secret);
	});

	it('the token travels in the body on POST and as bearer on GET; the log never shows it', async () => {
		await activateTrigger(options());
		const calls = sim.log.filter((entry) => entry.host === 'webhooks');
		expect(calls.map((c) => `${c.method} ${c.path} ${c.tokenPlacement.join(',')} ${c.tokenKind}`)).toEqual([
			// Where the log ends for each event: the trigger's cursor starts there.
			'GET /events header integration',
			'GET /events header integration',
			'GET /events header integration',
			'GET /webhooks header integration',
			'POST /webhooks body integration',
			'POST /webhooks body integration',
			'POST /webhooks body integration',
			// Another n8n main may have subscribed at the same moment: one look afterwards.
			'GET /webhooks header integration',
		]);
	});

	it('uses the credential\'s topic prefix', async () => {
		const other = await startSimulator({ allowHttpCallbacks: true, topicPrefix: 'acme-77' });
		try {
			const activated = await activateTrigger(options({ parameters: { authentication: 'clinicApi', events: [TWR_JOINED] }, credentials: credentialsFor(other) }));
			expect(activated.error).toBeUndefined();
			expect(other.subscriptions().map((s) => s.event_topic)).toEqual(['acme-77.waiting-room']);
		} finally {
			await other.close();
		}
	});

	it('no events selected -> refuses, creates nothing', async () => {
		const created = await runTriggerHook('create', options({ parameters: { authentication: 'clinicApi', events: [] } }));
		expect(created.error?.message).toBe('No events selected');
		expect(sim.subscriptions()).toHaveLength(0);
	});

	it('a credential without topic prefix -> refuses with what to fix', async () => {
		const credentials = credentialsFor(sim);
		credentials.clinicApi.topicPrefix = '';
		const created = await runTriggerHook('create', options({ credentials }));
		expect(created.error?.message).toMatch(/^The Clinic credential has no Topic Prefix/);
		expect(sim.subscriptions()).toHaveLength(0);
	});

	it('adopts the subscriptions a failed earlier activation left at our address (no static data): their secret is ours', async () => {
		const first = await activateTrigger(options());
		const before = live(sim).map((s) => s.id).sort();
		// n8n 1.x: the static data of that activation was never saved.
		sim.clearLog();
		const again = await activateTrigger(options({ store: first.store, staticData: {} }));
		expect(again.error).toBeUndefined();
		expect(again.created).toBe(true);
		expect(live(sim).map((s) => s.id).sort()).toEqual(before);
		expect(sim.log.filter((entry) => entry.method !== 'GET')).toEqual([]);
		const stored = nodeData(again.staticData);
		expect(Object.values(stored).map((entry) => (entry as IDataObject).id).sort()).toEqual(before);
	});

	it('removes what is at our address with a secret that is not ours (a copy, an old secret)', async () => {
		const first = await activateTrigger(options());
		live(sim)[0].authentication_data.secret = 'c'.repeat(64);
		const replaced = live(sim)[0].id;
		const again = await activateTrigger(options({ store: first.store, staticData: {} }));
		expect(again.error).toBeUndefined();
		expect(live(sim)).toHaveLength(3);
		expect(live(sim).map((s) => s.id)).not.toContain(replaced);
	});

	it('keeps (adopts) its own subscriptions whose secret is stored, re-creates only what is missing', async () => {
		const first = await activateTrigger(options());
		const [patient, consultation, schedule] = live(sim);
		await serviceCall(sim, 'DELETE', `/webhooks/${consultation.id}`);

		const created = await runTriggerHook('create', options({ store: first.store, staticData: first.staticData }));
		expect(created.error).toBeUndefined();
		const now = live(sim);
		expect(now.map((s) => s.id)).toEqual([patient.id, schedule.id, expect.any(Number)]);
		expect(now[2].event_name).toBe('consultation-finished');
		expect(nodeData(created.staticData)[PATIENT_CREATED]).toEqual(nodeData(first.staticData)[PATIENT_CREATED]);
		expect((nodeData(created.staticData)[CONSULTATION_FINISHED] as IDataObject).id).toBe(now[2].id);
	});

	it('an event no longer selected: its subscription is removed and forgotten', async () => {
		const first = await activateTrigger(options());
		const created = await runTriggerHook(
			'create',
			options({ parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED] }, store: first.store, staticData: first.staticData }),
		);
		expect(created.error).toBeUndefined();
		expect(live(sim).map((s) => s.event_name)).toEqual(['patient-created']);
		expect(Object.keys(nodeData(created.staticData))).toEqual([PATIENT_CREATED]);
	});

	it('a DELETE that fails while removing an event no longer selected removes nothing that works: activation succeeds, that one is left for next time', async () => {
		const proxy = await startRefusingProxy(sim.webhooksBaseUrl);
		try {
			const credentials = credentialsFor(sim, proxy.url);
			const first = await activateTrigger(options({ credentials }));
			const dropped = live(sim).find((s) => s.event_name === 'consultation-finished')!;
			proxy.refuse({ method: 'DELETE', path: `/webhooks/${dropped.id}`, status: 500, body: { error: 'Internal Server Error' } });
			const created = await runTriggerHook(
				'create',
				options({ credentials, parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED] }, store: first.store, staticData: first.staticData }),
			);
			expect(created.error).toBeUndefined();
			expect(live(sim).map((s) => s.event_name).sort()).toEqual(['consultation-finished', 'patient-created']);
			expect(Object.keys(nodeData(created.staticData))).toEqual([PATIENT_CREATED]);
		} finally {
			await proxy.close();
		}
	});

	it('a stored subscription at an old address (WEBHOOK_URL changed) is removed, the new address subscribed', async () => {
		const first = await activateTrigger(options());
		const moved = await activateTrigger(
			options({ store: first.store, staticData: first.staticData, webhookUrl: `https://new.example.test/webhook/${TRIGGER_WEBHOOK_ID}/webhook` }),
		);
		expect(moved.error).toBeUndefined();
		expect(moved.created).toBe(true);
		const now = live(sim);
		expect(now).toHaveLength(3);
		for (const s of now) expect(s.url.startsWith('https://new.example.test/')).toBe(true);
	});
});

describe('checkExists', () => {
	it('after an n8n restart (same static data): true, and nothing is subscribed twice', async () => {
		const first = await activateTrigger(options());
		const before = sim.subscriptions().map((s) => ({ ...s }));
		sim.clearLog();

		const restarted = await activateTrigger(options({ staticData: first.staticData }));
		expect(restarted.error).toBeUndefined();
		expect(restarted.result).toBe(true);
		expect(restarted.created).toBe(false);
		expect(sim.subscriptions()).toEqual(before);
		expect(sim.log.filter((entry) => entry.host === 'webhooks').map((e) => e.method)).toEqual(['GET']);
		expect(nodeData(restarted.staticData)).toEqual(nodeData(first.staticData));
	});

	it('everything in place -> true, and the static data is left as it is (n8n saves the workflow only on a change)', async () => {
		const first = await activateTrigger(options());
		const checked = await runTriggerHook('checkExists', options({ staticData: first.staticData, store: first.store }));
		expect(checked.error).toBeUndefined();
		expect(checked.result).toBe(true);
		expect(checked.staticDataChanged).toBe(false);
	});

	it('one subscription deleted behind our back -> false; never deletes anything itself', async () => {
		const first = await activateTrigger(options());
		const id = live(sim)[1].id;
		expect((await serviceCall(sim, 'DELETE', `/webhooks/${id}`)).status).toBe(200);
		sim.clearLog();

		const checked = await runTriggerHook('checkExists', options({ staticData: first.staticData }));
		expect(checked.result).toBe(false);
		expect(sim.log.filter((entry) => entry.method !== 'GET')).toEqual([]);
		expect(live(sim)).toHaveLength(2);
	});

	it('false when a secret is not stored (static data lost)', async () => {
		await activateTrigger(options());
		const checked = await runTriggerHook('checkExists', options({ staticData: {} }));
		expect(checked.result).toBe(false);
		expect(live(sim)).toHaveLength(3);
	});

	it('false when the service holds another secret than the stored one', async () => {
		const first = await activateTrigger(options());
		live(sim)[0].authentication_data.secret = 'f'.repeat(64);
		const checked = await runTriggerHook('checkExists', options({ staticData: first.staticData }));
		expect(checked.result).toBe(false);
	});

	it('false when an extra subscription points at our address (a copy left by someone)', async () => {
		const first = await activateTrigger(options());
		const copy = live(sim)[0];
		const made = await serviceCall(sim, 'POST', '/webhooks', {
			url: copy.url,
			topic: copy.event_topic,
			event_name: copy.event_name,
			authentication_data: { secret: 'e'.repeat(64) },
		});
		expect(made.status).toBe(201);
		const checked = await runTriggerHook('checkExists', options({ staticData: first.staticData }));
		expect(checked.result).toBe(false);
		// ... and create then cleans it up.
		const created = await runTriggerHook('create', options({ staticData: first.staticData }));
		expect(created.error).toBeUndefined();
		expect(live(sim).map((s) => s.id).sort()).toEqual([1001, 1002, 1003]);
		expect(subscriptionsIn(created.nodeStaticData)).toEqual(nodeData(first.staticData));
	});

	it('false when the service disabled one at our address; create replaces it and removes the disabled one', async () => {
		const first = await activateTrigger(options());
		const disabled = live(sim)[0];
		disabled.status = 'disabled';
		const checked = await runTriggerHook('checkExists', options({ staticData: first.staticData }));
		expect(checked.result).toBe(false);
		const created = await runTriggerHook('create', options({ staticData: first.staticData }));
		expect(created.error).toBeUndefined();
		expect(live(sim)).toHaveLength(3);
		expect(sim.subscriptions().find((s) => s.id === disabled.id)?.deleted_at).toBeTruthy();
	});

	it('false when the selection changed', async () => {
		const first = await activateTrigger(options());
		const more = await runTriggerHook(
			'checkExists',
			options({ parameters: { authentication: 'clinicApi', events: [...THREE, TWR_JOINED] }, staticData: first.staticData }),
		);
		expect(more.result).toBe(false);
		const fewer = await runTriggerHook(
			'checkExists',
			options({ parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED] }, staticData: first.staticData }),
		);
		expect(fewer.result).toBe(false);
	});
});

describe('deactivation (delete)', () => {
	it('removes every subscription, clears static data, answers true', async () => {
		const first = await activateTrigger(options());
		const deleted = await runTriggerHook('delete', options({ staticData: first.staticData }));
		expect(deleted.error).toBeUndefined();
		expect(deleted.result).toBe(true);
		expect(live(sim)).toHaveLength(0);
		expectStoppedCursorOnly(deleted.nodeStaticData);
		expect(deleted.staticDataChanged).toBe(true);
	});

	it('a subscription already gone (404) counts as deleted', async () => {
		const first = await activateTrigger(options());
		await serviceCall(sim, 'DELETE', `/webhooks/${live(sim)[0].id}`);
		sim.clearLog();
		const deleted = await runTriggerHook('delete', options({ staticData: first.staticData }));
		expect(deleted.error).toBeUndefined();
		expect(deleted.result).toBe(true);
		expect(sim.log.filter((e) => e.method === 'DELETE').map((e) => e.status)).toEqual([404, 200, 200]);
		expect(live(sim)).toHaveLength(0);
		expectStoppedCursorOnly(deleted.nodeStaticData);
	});

	it('sweeps leftovers at our address that static data does not know of', async () => {
		await activateTrigger(options());
		const deleted = await runTriggerHook('delete', options({ staticData: {} }));
		expect(deleted.result).toBe(true);
		expect(live(sim)).toHaveLength(0);
	});

	it('leaves other addresses alone', async () => {
		const other = await activateTrigger(options({ nodeName: 'Other Trigger', webhookId: '0b6d9a52-57a1-4bde-9a1e-2f3e4c5d6e7f' }));
		expect(other.error).toBeUndefined();
		const mine = await activateTrigger(options());
		await runTriggerHook('delete', options({ staticData: mine.staticData }));
		expect(live(sim)).toHaveLength(3);
		for (const s of live(sim)) expect(s.url).toContain('0b6d9a52-57a1-4bde-9a1e-2f3e4c5d6e7f');
	});

	it('an error other than 404 -> still removes the rest, keeps the failed one recorded, then throws', async () => {
		const proxy = await startRefusingProxy(sim.webhooksBaseUrl);
		try {
			const credentials = credentialsFor(sim, proxy.url);
			const first = await activateTrigger(options({ credentials }));
			const [, middle] = live(sim);
			proxy.refuse({ method: 'DELETE', path: `/webhooks/${middle.id}`, status: 500, body: { error: 'Internal Server Error' } });
			const deleted = await runTriggerHook('delete', options({ credentials, staticData: first.staticData }));
			// NodeOperationError: at activation n8n 1.x shows a NodeApiError's description only.
			expect(deleted.error?.constructor.name).toBe('NodeOperationError');
			expect(deleted.error?.message).toContain('Could not remove every webhook subscription');
			expect(live(sim).map((s) => s.id)).toEqual([middle.id]);
			expect(Object.keys(subscriptionsIn(deleted.nodeStaticData))).toEqual([CONSULTATION_FINISHED]);
			expect(findLeaks(secretsOf(first), deleted.error)).toEqual([]);
		} finally {
			await proxy.close();
		}
	});
});

describe('teardown as n8n expects', () => {
	// n8n 2.41 ignores what delete returns, retries one that throws (3 attempts) and gives up
	// at once on a UserError; n8n 1.x logs a throw and keeps static data for the next activation.
	async function activeWithOneSubscription() {
		const first = await activateTrigger(options({ parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED], options: {} } }));
		expect(live(sim)).toHaveLength(1);
		return first;
	}

	it('the service answering 503 -> delete throws (n8n retries), the subscription stays recorded; the retry removes it', async () => {
		const first = await activeWithOneSubscription();
		sim.addFault({ kind: 'status', status: 503, host: 'webhooks', method: 'DELETE' });
		const failed = await runTriggerHook('delete', options({ staticData: first.staticData }));
		expect(failed.error).toBeDefined();
		expect(failed.error).not.toBeInstanceOf(UserError);
		expect(failed.error?.message).toContain('Could not remove every webhook subscription');
		expect(live(sim)).toHaveLength(1);
		expect(Object.keys(subscriptionsIn(failed.nodeStaticData))).toEqual([PATIENT_CREATED]);

		sim.clearFaults();
		const retried = await runTriggerHook('delete', options({ staticData: failed.staticData }));
		expect(retried.error).toBeUndefined();
		expect(retried.result).toBe(true);
		expect(live(sim)).toHaveLength(0);
		expectStoppedCursorOnly(retried.nodeStaticData);
	});

	it('the answer lost after the service removed it (connection reset) -> throws; the retry meets 404 and answers true', async () => {
		const first = await activeWithOneSubscription();
		sim.addFault({ kind: 'reset', host: 'webhooks', method: 'DELETE', count: 1 });
		const failed = await runTriggerHook('delete', options({ staticData: first.staticData }));
		expect(failed.error).toBeDefined();
		expect(failed.error).not.toBeInstanceOf(UserError);
		expect(live(sim)).toHaveLength(0);

		sim.clearLog();
		const retried = await runTriggerHook('delete', options({ staticData: failed.staticData }));
		expect(retried.error).toBeUndefined();
		expect(retried.result).toBe(true);
		expect(sim.log.filter((e) => e.method === 'DELETE').map((e) => e.status)).toEqual([404]);
		expectStoppedCursorOnly(retried.nodeStaticData);
	});

	it('no answer (the connection dropped while waiting) -> throws and keeps the id recorded, though the sweep removed it; the retry answers true', async () => {
		const first = await activeWithOneSubscription();
		sim.addFault({ kind: 'stall', host: 'webhooks', method: 'DELETE', count: 1 });
		const pending = runTriggerHook('delete', options({ staticData: first.staticData }));
		await waitUntil(() => sim.faults().held === 1);
		sim.clearFaults();
		const failed = await pending;
		expect(failed.error).toBeDefined();
		expect(failed.error).not.toBeInstanceOf(UserError);
		expect(live(sim)).toHaveLength(0);
		expect(Object.keys(subscriptionsIn(failed.nodeStaticData))).toEqual([PATIENT_CREATED]);

		const retried = await runTriggerHook('delete', options({ staticData: failed.staticData }));
		expect(retried.result).toBe(true);
		expectStoppedCursorOnly(retried.nodeStaticData);
	});
});

describe('partial failure rollback', () => {
	it('the 3rd subscription refused -> the first two removed, static data cleared, the error names the event', async () => {
		const proxy = await startRefusingProxy(sim.webhooksBaseUrl);
		try {
			proxy.refuse({
				method: 'POST',
				path: '/webhooks',
				nth: 3,
				status: 422,
				body: { errors: { event_name: ['is not enabled for this organization'] } },
			});
			const activated = await activateTrigger(options({ credentials: credentialsFor(sim, proxy.url) }));
			expect(activated.error?.constructor.name).toBe('NodeOperationError');
			expect(activated.error?.message).toBe(
				'Could not subscribe to "Appointment Created": The clinic service refused the request: event_name is not enabled for this organization',
			);
			expect((activated.error as { description?: string }).description).toContain('removed again');
			expect(sim.subscriptions()).toHaveLength(2);
			expect(live(sim)).toHaveLength(0);
			expect(activated.nodeStaticData).toEqual({});
			// No subscription secret, password or token in the error.
			const secrets = [...sim.subscriptions().map((s) => s.authentication_data.secret), ...secretsOf(activated)];
			expect(findLeaks(secrets, activated.error)).toEqual([]);
		} finally {
			await proxy.close();
		}
	});

	it('the service unreachable for the 2nd POST -> rollback, nothing left live', async () => {
		const proxy = await startRefusingProxy(sim.webhooksBaseUrl);
		try {
			proxy.refuse({ method: 'POST', path: '/webhooks', nth: 2, status: 503, body: { error: 'Service Unavailable' } });
			const activated = await activateTrigger(options({ credentials: credentialsFor(sim, proxy.url) }));
			expect(activated.error?.message).toContain('Could not subscribe to "Consultation Finished"');
			expect(live(sim)).toHaveLength(0);
			// n8n 2.41 retries the activation: it then works and leaves exactly three.
			const retried = await activateTrigger(
				options({ credentials: credentialsFor(sim, proxy.url), store: activated.store, staticData: activated.staticData }),
			);
			expect(retried.error).toBeUndefined();
			expect(live(sim)).toHaveLength(3);
		} finally {
			await proxy.close();
		}
	});

	it('adopted subscriptions are removed too on failure: never half-active', async () => {
		const proxy = await startRefusingProxy(sim.webhooksBaseUrl);
		try {
			const credentials = credentialsFor(sim, proxy.url);
			const first = await activateTrigger(options({ credentials }));
			await serviceCall(sim, 'DELETE', `/webhooks/${live(sim)[2].id}`);
			proxy.refuse({ method: 'POST', path: '/webhooks', status: 500, body: { error: 'boom' } });
			const created = await runTriggerHook('create', options({ credentials, staticData: first.staticData }));
			expect(created.error?.message).toContain('Could not subscribe to "Appointment Created');
			expect(live(sim)).toHaveLength(0);
			// The cursor of the earlier activation stays: the next one runs what was logged since.
			expect(subscriptionsIn(created.nodeStaticData)).toEqual({});
		} finally {
			await proxy.close();
		}
	});
});

describe('callback address guard', () => {
	const insecure = `http://127.0.0.1:5678/webhook/${TRIGGER_WEBHOOK_ID}/webhook`;

	it('http:// address -> activation fails saying HTTPS is needed and how to set WEBHOOK_URL', async () => {
		const activated = await activateTrigger(options({ webhookUrl: insecure }));
		expect(activated.error?.constructor.name).toBe('NodeOperationError');
		// n8n's "Listen for test event" toast shows only the message: it names both fixes itself.
		expect(activated.error?.message).toBe(
			`The clinic service sends events only to https:// addresses, and n8n gave this trigger ${insecure}: set n8n's WEBHOOK_URL to a public https:// address, or for a local test turn on Options > Allow Insecure URL`,
		);
		const description = (activated.error as { description?: string }).description ?? '';
		expect(description).toContain('restart n8n');
		expect(sim.log.filter((e) => e.host === 'webhooks')).toHaveLength(0);
		expect(sim.subscriptions()).toHaveLength(0);
	});

	it('"Allow Insecure URL" ticked -> http:// is registered (local tests)', async () => {
		const activated = await activateTrigger(
			options({ webhookUrl: insecure, parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED], options: { allowInsecureUrl: true } } }),
		);
		expect(activated.error).toBeUndefined();
		expect(live(sim).map((s) => s.url)).toEqual([`${insecure}?event=patient%3Apatient-created`]);
	});

	it('"Allow Insecure URL" unticked on an active http:// trigger -> checkExists false, create says HTTPS is needed', async () => {
		const allowed = { authentication: 'clinicApi', events: [PATIENT_CREATED], options: { allowInsecureUrl: true } };
		const first = await activateTrigger(options({ webhookUrl: insecure, parameters: allowed }));
		const refused = { ...options({ webhookUrl: insecure, staticData: first.staticData }), parameters: { ...allowed, options: {} } };

		const checked = await runTriggerHook('checkExists', refused);
		expect(checked.error).toBeUndefined();
		expect(checked.result).toBe(false);
		const created = await runTriggerHook('create', refused);
		expect(created.error?.message).toMatch(/^The clinic service sends events only to https:\/\/ addresses, .* Allow Insecure URL$/);
	});
});

describe('a credential without the Webhook Service Base URL', () => {
	it('activation and deactivation say so, and nothing is sent', async () => {
		const withoutWebhooks = options({ credentials: credentialsFor(sim, '') });
		const activated = await activateTrigger(withoutWebhooks);
		expect(activated.error?.message).toBe('The Clinic credential has no Webhook Service Base URL');
		expect((activated.error as { description?: string }).description).toContain('"Webhook Service Base URL" in the credential');

		const deleted = await runTriggerHook('delete', withoutWebhooks);
		expect(deleted.error?.message).toBe('The Clinic credential has no Webhook Service Base URL');
		expect(sim.log.filter((e) => e.host === 'webhooks')).toHaveLength(0);
	});
});

describe('test mode ("Listen for test event")', () => {
	it('registers with the /webhook-test/ address and removes it again', async () => {
		const listening = await activateTrigger(options({ mode: 'manual' }));
		expect(listening.error).toBeUndefined();
		expect(listening.webhookUrl).toBe(`https://n8n.example.test/webhook-test/${TRIGGER_WEBHOOK_ID}/webhook`);
		expect(live(sim)).toHaveLength(3);
		for (const s of live(sim)) expect(s.url.startsWith(listening.webhookUrl)).toBe(true);

		const stopped = await runTriggerHook('delete', options({ mode: 'manual', staticData: listening.staticData }));
		expect(stopped.result).toBe(true);
		expect(live(sim)).toHaveLength(0);
	});

	it('a test listen beside an active production trigger leaves the production subscriptions alone', async () => {
		const production = await activateTrigger(options());
		const listening = await activateTrigger(options({ mode: 'manual' }));
		expect(live(sim)).toHaveLength(6);
		await runTriggerHook('delete', options({ mode: 'manual', staticData: listening.staticData }));
		expect(live(sim).map((s) => s.id)).toEqual(Object.values(nodeData(production.staticData)).map((e) => (e as IDataObject).id));
	});

	it('even when the test listen starts from the production static data, production stays untouched', async () => {
		const production = await activateTrigger(options());
		const productionIds = live(sim).map((s) => s.id);
		// Fewer events selected in the editor than in the saved, active version.
		const parameters = { authentication: 'clinicApi', events: [PATIENT_CREATED] };
		const listening = await activateTrigger(options({ mode: 'manual', parameters, staticData: production.staticData }));
		expect(listening.error).toBeUndefined();
		expect(live(sim).map((s) => s.id)).toEqual([...productionIds, expect.any(Number)]);
		expect(Object.keys(subscriptionsIn(listening.nodeStaticData))).toEqual([PATIENT_CREATED]);
		await runTriggerHook('delete', options({ mode: 'manual', parameters, staticData: listening.staticData }));
		expect(live(sim).map((s) => s.id)).toEqual(productionIds);
	});
});

describe('refresh-token credential', () => {
	it('works with the Clinic Refresh Token API credential as well', async () => {
		const refreshToken = sim.issueRefreshToken(sim.twoFactor.username);
		const activated = await activateTrigger({
			parameters: { authentication: 'clinicRefreshTokenApi', events: [PATIENT_CREATED] },
			credentials: {
				clinicRefreshTokenApi: {
					baseUrl: sim.apiBaseUrl,
					webhookBaseUrl: sim.webhooksBaseUrl,
					topicPrefix: sim.topicPrefix,
					refreshToken,
				},
			},
		});
		expect(activated.error).toBeUndefined();
		expect(live(sim)).toHaveLength(1);
	});
});

describe('no secret in the workflow: secrets derive from the credential\'s signing key', () => {
	/** Static data as version 0.1 stored it: the secret itself in each entry. */
	function legacyStaticData(result: HookResult): IDataObject {
		const entries: IDataObject = {};
		for (const [key, stored] of Object.entries(subscriptionsIn(result.nodeStaticData))) {
			const { id, topic } = stored as { id: number; topic: string };
			const secret = sim.subscriptions().find((s) => s.id === id)!.authentication_data.secret;
			entries[key] = { id, secret, topic };
		}
		return { 'node:Clinic Trigger': entries };
	}

	it('upgrade: stored secrets still verify; the next checkExists says false and create replaces them', async () => {
		const first = await activateTrigger(options({ parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED] } }));
		// 0.1.0 made each secret at random and stored it.
		live(sim)[0].authentication_data.secret = randomBytes(32).toString('hex');
		const legacy = legacyStaticData(first);
		const oldId = live(sim)[0].id;
		const oldSecret = live(sim)[0].authentication_data.secret;

		// One event 0.1.0 ran (the service's delivery log shows the 2xx), then a new one.
		logTry(logNow(sim, { id: 4 }), live(sim)[0].url, 200);
		const record = logNow(sim, { id: 5 });
		const raw = Buffer.from(JSON.stringify({ value: { id: 5 } }));
		const delivered = await deliverWebhook({
			parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED], options: {} },
			store: first.store,
			staticData: legacy,
			rawBody: raw,
			headers: { 'content-type': 'application/json', signature: signDelivery(oldSecret, raw) },
			query: { event: PATIENT_CREATED },
		});
		expect(delivered.response.status).toBe(200);
		// Stored before cursors existed: what the delivery log shows ran stays run; this delivery's event runs.
		expect(delivered.workflowData?.[0].map((item) => item.json.eventId)).toEqual([record.id]);

		sim.clearLog();
		const migrated = await activateTrigger(
			options({ parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED] }, store: first.store, staticData: legacy }),
		);
		expect(migrated.error).toBeUndefined();
		// The replacement is subscribed before the old one goes: no moment without a subscription.
		const writes = sim.log.filter((entry) => entry.host === 'webhooks' && entry.method !== 'GET').map((entry) => `${entry.method} ${entry.path}`);
		expect(writes).toEqual(['POST /webhooks', `DELETE /webhooks/${oldId}`]);
		expect(migrated.created).toBe(true);
		expect(live(sim).map((s) => s.id)).not.toContain(oldId);
		expect(live(sim)).toHaveLength(1);
		expect(JSON.stringify(migrated.staticData)).not.toContain(oldSecret);
		expect(JSON.stringify(migrated.staticData)).not.toContain(live(sim)[0].authentication_data.secret);
		expect(Object.keys(migrated.nodeStaticData[PATIENT_CREATED] as IDataObject).sort()).toEqual(['id', 'keyId', 'topic']);
	});

	it('a credential saved before signing keys existed gets one at activation (one extra sign-in), kept afterwards', async () => {
		const first = await activateTrigger(options());
		// As stored by 0.1: a valid access token, no signing key.
		const edited = await runTriggerHook('delete', options({ store: first.store, staticData: first.staticData, credentials: { clinicApi: { webhookSigningKey: '' } } }));
		expect(edited.error).toBeUndefined();
		expect(edited.store.data('clinicApi').webhookSigningKey).toBe('');
		const tokenRequestsBefore = sim.tokenRequests();

		const activated = await activateTrigger(options({ store: edited.store, staticData: edited.staticData }));
		expect(activated.error).toBeUndefined();
		const key = String(activated.store.data('clinicApi').webhookSigningKey);
		expect(key).toMatch(/^[0-9a-f]{64}$/);
		expect(sim.tokenRequests() - tokenRequestsBefore).toBe(1);

		// Deactivate and activate again: same key, no further sign-in.
		const off = await runTriggerHook('delete', options({ store: activated.store, staticData: activated.staticData }));
		const again = await activateTrigger(options({ store: off.store, staticData: off.staticData }));
		expect(again.store.data('clinicApi').webhookSigningKey).toBe(key);
		expect(sim.tokenRequests() - tokenRequestsBefore).toBe(1);
	});

	it('a delivery signed with a secret derived from another signing key is refused 401', async () => {
		const first = await activateTrigger(options({ parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED] } }));
		const forged = subscriptionSecret('0'.repeat(64), TRIGGER_WEBHOOK_ID, PATIENT_CREATED);
		expect(live(sim)[0].authentication_data.secret).not.toBe(forged);
		const raw = Buffer.from(JSON.stringify({ value: { id: 6 } }));
		const delivered = await deliverWebhook({
			parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED], options: {} },
			store: first.store,
			staticData: first.staticData,
			rawBody: raw,
			headers: { 'content-type': 'application/json', signature: signDelivery(forged, raw) },
			query: { event: PATIENT_CREATED },
		});
		expect(delivered.response.status).toBe(401);
		expect(delivered.workflowData).toBeUndefined();
	});

	it('two n8n mains activating the same trigger at once leave one subscription per event, both storing it', async () => {
		// The credential already has its signing key (as after any earlier sign-in).
		const signedIn = await activateTrigger(options({ parameters: { authentication: 'clinicApi', events: [TWR_JOINED] } }));
		await runTriggerHook('delete', options({ store: signedIn.store, staticData: signedIn.staticData }));
		sim.clearLog();

		const [mainA, mainB] = await Promise.all([
			activateTrigger(options({ store: signedIn.store, staticData: {} })),
			activateTrigger(options({ store: signedIn.store, staticData: {} })),
		]);
		expect(mainA.error).toBeUndefined();
		expect(mainB.error).toBeUndefined();
		const subscriptions = live(sim);
		expect(subscriptions.map((s) => s.event_name).sort()).toEqual([
			'consultation-finished',
			'consultation-schedule-create',
			'patient-created',
		]);
		const ids = (result: HookResult) => Object.values(result.nodeStaticData).map((entry) => (entry as IDataObject).id).sort();
		expect(ids(mainA)).toEqual(subscriptions.map((s) => s.id).sort());
		expect(ids(mainB)).toEqual(ids(mainA));

		// A third main (or a restart) finds everything in place.
		const later = await activateTrigger(options({ store: signedIn.store, staticData: mainA.staticData }));
		expect(later.created).toBe(false);
		expect(live(sim)).toHaveLength(3);
	});

	it('a subscription another main made for this trigger (its secret is the one we derive) is adopted, not replaced', async () => {
		const first = await activateTrigger(options());
		const before = live(sim).map((s) => s.id).sort();
		// A main whose static data was never saved: it adopts instead of re-subscribing.
		const other = await activateTrigger(options({ store: first.store, staticData: {} }));
		expect(other.error).toBeUndefined();
		expect(live(sim).map((s) => s.id).sort()).toEqual(before);
	});
});
