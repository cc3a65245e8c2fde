/**
 * A Clinic Trigger that has a stale subscription, inside a running n8n: while the webhook service is
 * down a delivery it cannot verify fails visibly (a failed execution naming the cause), and
 * such deliveries start at most one resubscribe a minute; once the service answers, the
 * trigger subscribes again with the credential's new key and runs the events it missed (in
 * the event log past its cursor), each once. A subscription the service disabled is replaced on the next
 * delivery of another of the trigger's events, with the same catch-up; a subscribe the
 * service refuses then leaves every working subscription in place. Forged requests while the
 * key is replaced start one resubscribe in all and never run.
 */
import { randomBytes } from 'node:crypto';

import { ANSWER_WITHIN_MS } from '../../nodes/ClinicTrigger/newEvents';
import { passwordCredentialData } from '../simulator';
import { ALL_N8N_VERSIONS, importedCredentialId, nodeJson, type N8nServer, type WorkflowImport } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { clinicTriggerWorkflow } from './support/workflows';

const CREDENTIAL = { id: 'clinicResub0001', name: 'Clinic API (resubscribing)' };
const TRIGGER = 'Patient Events';

function triggerWorkflow(name: string, webhookId: string, events: string[]): WorkflowImport {
	return clinicTriggerWorkflow({ name, webhookId, events, nodeName: TRIGGER, output: 'simple', credential: CREDENTIAL });
}

describe.each(ALL_N8N_VERSIONS)('Clinic Trigger resubscribing in n8n %s', (version) => {
	const clinic = useClinicN8n({
		version,
		label: 'resubscribing',
		laneServer: true,
		// Times as a Rails service in Mexico renders them: the catch-up compares them as instants.
		simulator: { allowHttpCallbacks: true, deliveryRetryDelayMs: 100, timestamps: 'mexico' },
		credentials: (sim) => [{ ...CREDENTIAL, type: 'clinicApi', data: passwordCredentialData(sim) }],
		workflows: () => [
			triggerWorkflow('Resubscribing: signing key', '6a0e2d1c-4b7f-4e21-9c3d-1f2e3d4c5b61', ['patient:patient-updated']),
			triggerWorkflow('Resubscribing: disabled subscription', '7b1f3e2d-5c8a-4f32-8d4e-2a3b4c5d6e72', [
				'patient:patient-updated',
				'patient:patient-created',
			]),
			triggerWorkflow('Resubscribing: subscribe refused', '8c2a4f3e-6d9b-4a43-9e5f-3b4c5d6e7f83', [
				'patient:patient-updated',
				'patient:patient-created',
			]),
			triggerWorkflow('Resubscribing: forged requests', '9d3b5a4f-7e0c-4b54-8f6a-4c5d6e7f8094', ['patient:patient-updated']),
		],
	});
	const { n8n } = clinic;
	const [keyWorkflow, disabledWorkflow, refusedWorkflow, forgedWorkflow] = [0, 1, 2, 3].map((index) => () => clinic.workflowIds[index]);
	/** The credential saved anew with another signing key; the trigger's kept copy expires. */
	const replaceSigningKey = async () => {
		await clinic.server.rest('PATCH', `/credentials/${importedCredentialId(clinic.n8n.ctx, CREDENTIAL.id)}`, {
			name: CREDENTIAL.name,
			type: 'clinicApi',
			data: passwordCredentialData(clinic.sim, { webhookSigningKey: randomBytes(32).toString('hex') }),
		});
		await new Promise((resolve) => setTimeout(resolve, ANSWER_WITHIN_MS + 500));
	};

	// A test that failed with the service "down" leaves the next one a working service.
	afterEach(() => clinic.sim.clearFaults());

	const liveAt = (webhookId: string) =>
		clinic.sim.subscriptions().filter((s) => s.status === 'enabled' && s.deleted_at === null && s.url.includes(webhookId));
	const triggerItems = (executions: Awaited<ReturnType<N8nServer['listExecutions']>>) =>
		executions.filter((e) => e.status === 'success').flatMap((e) => nodeJson(e, TRIGGER));
	const idsOf = (items: Array<Record<string, unknown>>) => items.map((json) => json.eventId).sort();

	it(
		'a new signing key in the credential: fails visibly while the service is down (the retries within the minute refused 401), then subscribes again and runs each missed event once',
		n8n.run(async () => {
			await clinic.server.activateWorkflow(keyWorkflow());
			const [original] = liveAt('6a0e2d1c');
			const before = await clinic.sim.emit('patient', 'patient-updated', { id: 1, first_name: 'Before' });
			await clinic.server.waitForExecutions(keyWorkflow(), 1);

			// The key changes (a credential saved anew); the service is down meanwhile.
			await replaceSigningKey();
			clinic.sim.addFault({ kind: 'status', status: 503, host: 'webhooks' });
			const startedAt = Date.now();
			const missedFirst = await clinic.sim.emit('patient', 'patient-updated', { id: 2, first_name: 'Missed' });
			// n8n answers 500 to the first delivery (a failed execution); the service's retries
			// within the minute cannot be verified and start no second resubscribe: 401.
			expect(missedFirst.logs.map((log) => log.response_code)).toEqual(missedFirst.logs.map((_, i) => (i === 0 ? 500 : 401)));
			const failed = (await clinic.server.waitForExecutions(keyWorkflow(), 2)).filter((e) => e.status === 'error');
			expect(failed).toHaveLength(1);
			expect(JSON.stringify(failed[0].data?.resultData.error)).toMatch(
				/cannot receive events: the credential's webhook signing key changed.*Subscribing again failed/,
			);

			// The service is back; a minute after the first try, the next delivery resubscribes.
			clinic.sim.clearFaults();
			await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + 61_000 - Date.now())));
			const missedSecond = await clinic.sim.emit('patient', 'patient-updated', { id: 3, first_name: 'Resubscribed' });
			const resubscribed = await clinic.server.waitForExecutions(keyWorkflow(), failed.length + 2);
			const missedIds = [missedFirst.id, missedSecond.id];
			expect(idsOf(triggerItems(resubscribed).filter((json) => missedIds.includes(json.eventId as number)))).toEqual(missedIds.sort());

			// One subscription, the stale one removed; the next event is heard as usual.
			const [replacement] = liveAt('6a0e2d1c');
			expect(liveAt('6a0e2d1c')).toHaveLength(1);
			expect(replacement.id).not.toBe(original.id);
			const after = await clinic.sim.emit('patient', 'patient-updated', { id: 4, first_name: 'After' });
			expect(after.logs.map((log) => log.response_code)).toEqual([200]);
			const all = await clinic.server.waitForExecutions(keyWorkflow(), failed.length + 3);
			const items = triggerItems(all);
			expect(idsOf(items)).toEqual([before.id, missedFirst.id, missedSecond.id, after.id].sort());
		}),
		5 * 60_000,
	);

	it(
		'a subscription the service disabled: the next delivery of another event replaces it and runs the missed events once',
		n8n.run(async () => {
			await clinic.server.activateWorkflow(disabledWorkflow());
			const updated = liveAt('7b1f3e2d').find((s) => s.event_name === 'patient-updated')!;
			// The service stamps subscriptions to the whole second: the missed events come after it.
			await new Promise((resolve) => setTimeout(resolve, 1010 - (Date.now() % 1000)));
			expect(clinic.sim.stopSubscription(updated.id, 'disable')).toBe(true);
			const missed = [
				await clinic.sim.emit('patient', 'patient-updated', { id: 1, first_name: 'Unheard' }),
				await clinic.sim.emit('patient', 'patient-updated', { id: 2, first_name: 'Unheard too' }),
			];
			for (const record of missed) expect(record.logs.filter((log) => log.target_url.includes('7b1f3e2d'))).toEqual([]);

			const created = await clinic.sim.emit('patient', 'patient-created', { id: 20, first_name: 'Wakes it' });
			const [run] = await clinic.server.waitForExecutions(disabledWorkflow(), 1);
			expect(run.status).toBe('success');
			const items = nodeJson(run, TRIGGER);
			// Oldest first: the missed events, then the one that woke it.
			expect(items.map((json) => json.eventId)).toEqual([...missed.map((record) => record.id), created.id]);

			// The disabled one removed, a live one per event; the replaced event is heard again.
			expect(clinic.sim.subscriptions().find((s) => s.id === updated.id)?.deleted_at).not.toBeNull();
			expect(liveAt('7b1f3e2d').map((s) => s.event_name).sort()).toEqual(['patient-created', 'patient-updated']);
			const heard = await clinic.sim.emit('patient', 'patient-updated', { id: 3, first_name: 'Heard' });
			const all = await clinic.server.waitForExecutions(disabledWorkflow(), 2);
			expect(idsOf(triggerItems(all))).toEqual([...missed.map((record) => record.id), created.id, heard.id].sort());
		}),
		5 * 60_000,
	);

	it(
		'the service answering 500 to the one subscribe while resubscribing: the working subscription stays, the trigger keeps hearing its events, and the next delivery resubscribes',
		n8n.run(async () => {
			await clinic.server.activateWorkflow(refusedWorkflow());
			const updated = liveAt('8c2a4f3e').find((s) => s.event_name === 'patient-updated')!;
			const created = liveAt('8c2a4f3e').find((s) => s.event_name === 'patient-created')!;
			await new Promise((resolve) => setTimeout(resolve, 1010 - (Date.now() % 1000)));
			expect(clinic.sim.stopSubscription(updated.id, 'disable')).toBe(true);
			const missed = await clinic.sim.emit('patient', 'patient-updated', { id: 1, first_name: 'Unheard' });
			clinic.sim.addFault({ kind: 'status', status: 500, host: 'webhooks', method: 'POST', path: '/webhooks', count: 1 });
			const wakes = await clinic.sim.emit('patient', 'patient-created', { id: 20, first_name: 'Wakes it' });
			// The first try here failed (the subscribe refused); the service's retry resubscribed. (The
			// disabled-subscription workflow, still active, hears the event too, at its own address.)
			expect(wakes.logs.filter((log) => log.target_url.includes('8c2a4f3e')).map((log) => log.response_code)).toEqual([500, 200]);
			const [failed] = (await clinic.server.waitForExecutions(refusedWorkflow(), 2)).filter((e) => e.status === 'error');
			expect(JSON.stringify(failed.data?.resultData.error)).toMatch(/left in place, and the next delivery to this trigger subscribes again/);
			expect(liveAt('8c2a4f3e').map((s) => s.id)).toContain(created.id);
			expect(liveAt('8c2a4f3e').map((s) => s.event_name).sort()).toEqual(['patient-created', 'patient-updated']);

			// Every later event is heard, each once.
			const later = [];
			for (let i = 0; i < 5; i++) later.push(await clinic.sim.emit('patient', i % 2 ? 'patient-updated' : 'patient-created', { id: 30 + i, first_name: 'Later' }));
			const all = await clinic.server.waitForExecutions(refusedWorkflow(), 2 + later.length);
			expect(idsOf(triggerItems(all))).toEqual([missed.id, wakes.id, ...later.map((record) => record.id)].sort());
		}),
		5 * 60_000,
	);

	it(
		'forged requests while the signing key is replaced: 30 at once and 30 one after another start one resubscribe in all, and none runs',
		n8n.run(async () => {
			await clinic.server.activateWorkflow(forgedWorkflow());
			const [subscription] = liveAt('9d3b5a4f');
			await replaceSigningKey();
			// Subscribing fails meanwhile, so the stored subscription keeps the replaced key throughout.
			clinic.sim.addFault({ kind: 'status', status: 500, host: 'webhooks', method: 'POST', path: '/webhooks' });
			clinic.sim.clearLog();
			const forge = async (id: number) =>
				await fetch(subscription.url, {
					method: 'POST',
					headers: { 'content-type': 'application/json', signature: randomBytes(32).toString('hex') },
					body: JSON.stringify({ value: { id, first_name: 'Forged' } }),
				});
			const atOnce = await Promise.all(Array.from({ length: 30 }, async (_, i) => await forge(100 + i)));
			const oneAfterAnother = [];
			for (let i = 0; i < 30; i++) oneAfterAnother.push(await forge(200 + i));
			const subscribes = clinic.sim.log.filter((entry) => entry.method === 'POST' && entry.path === '/webhooks');
			expect(subscribes).toHaveLength(1);
			expect([...atOnce, ...oneAfterAnother].filter((answer) => answer.status === 401)).toHaveLength(59);
			const executions = await clinic.server.listExecutions(forgedWorkflow(), { includeData: true });
			expect(triggerItems(executions)).toEqual([]);
			expect(executions.filter((e) => e.status === 'error')).toHaveLength(1);
		}),
		5 * 60_000,
	);
});
