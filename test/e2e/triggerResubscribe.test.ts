/**
 * A Clinic Trigger that has a stale subscription, inside a running n8n: while the webhook service is
 * down a delivery it cannot verify fails visibly (a failed execution naming the cause);
 * once the service answers, the trigger subscribes again with the credential's new key
 * and runs the events it missed, each once, marked `recovered`. A subscription the service
 * disabled is replaced on the next delivery of another of the trigger's events, with the
 * same catch-up.
 */
import { randomBytes } from 'node:crypto';


import { CREDENTIAL_KEPT_MS } from '../../nodes/ClinicTrigger/keptCredentials';
import { passwordCredentialData } from '../simulator';
import { ALL_N8N_VERSIONS, nodeJson, type N8nServer, type WorkflowImport } from './harness';
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
		// Times as a Rails service in Mexico renders them: the catch-up compares them as instants.
		simulator: { allowHttpCallbacks: true, deliveryRetryDelayMs: 100, timestamps: 'mexico' },
		credentials: (sim) => [{ ...CREDENTIAL, type: 'clinicApi', data: passwordCredentialData(sim) }],
		workflows: () => [
			triggerWorkflow('Resubscribing: signing key', '6a0e2d1c-4b7f-4e21-9c3d-1f2e3d4c5b61', ['patient:patient-updated']),
			triggerWorkflow('Resubscribing: disabled subscription', '7b1f3e2d-5c8a-4f32-8d4e-2a3b4c5d6e72', [
				'patient:patient-updated',
				'patient:patient-created',
			]),
		],
	});
	const { n8n } = clinic;
	const [keyWorkflow, disabledWorkflow] = [0, 1].map((index) => () => clinic.workflowIds[index]);

	// A test that failed with the service "down" leaves the next one a working service.
	afterEach(() => clinic.sim.clearFaults());

	const liveAt = (webhookId: string) =>
		clinic.sim.subscriptions().filter((s) => s.status === 'enabled' && s.deleted_at === null && s.url.includes(webhookId));
	const triggerItems = (executions: Awaited<ReturnType<N8nServer['listExecutions']>>) =>
		executions.filter((e) => e.status === 'success').flatMap((e) => nodeJson(e, TRIGGER));
	const idsOf = (items: Array<Record<string, unknown>>) => items.map((json) => json.eventId).sort();

	it(
		"a new signing key in the credential: fails visibly while the service is down, then subscribes again and runs each missed event once",
		n8n.run(async () => {
			await clinic.server.activateWorkflow(keyWorkflow());
			const [original] = liveAt('6a0e2d1c');
			const before = await clinic.sim.emit('patient', 'patient-updated', { id: 1, first_name: 'Before' });
			await clinic.server.waitForExecutions(keyWorkflow(), 1);

			// The key changes (a credential saved anew); the service is down meanwhile.
			await clinic.server.rest('PATCH', `/credentials/${CREDENTIAL.id}`, {
				...CREDENTIAL,
				type: 'clinicApi',
				data: passwordCredentialData(clinic.sim, { webhookSigningKey: randomBytes(32).toString('hex') }),
			});
			// The trigger keeps the credential it read for the last delivery this long.
			await new Promise((resolve) => setTimeout(resolve, CREDENTIAL_KEPT_MS + 500));
			clinic.sim.addFault({ kind: 'status', status: 503, host: 'webhooks' });
			const missedFirst = await clinic.sim.emit('patient', 'patient-updated', { id: 2, first_name: 'Missed' });
			// n8n answers 500 to the first delivery and to each of the service's retries, each a failed execution.
			expect(missedFirst.logs.map((log) => log.response_code)).toEqual(missedFirst.logs.map(() => 500));
			const failed = (await clinic.server.waitForExecutions(keyWorkflow(), 1 + missedFirst.logs.length)).filter((e) => e.status === 'error');
			expect(failed).toHaveLength(missedFirst.logs.length);
			expect(JSON.stringify(failed[0].data?.resultData.error)).toMatch(
				/cannot receive events: the credential's webhook signing key changed.*Subscribing again failed/,
			);

			// The service is back: the next delivery resubscribes.
			clinic.sim.clearFaults();
			const missedSecond = await clinic.sim.emit('patient', 'patient-updated', { id: 3, first_name: 'Resubscribed' });
			const resubscribed = await clinic.server.waitForExecutions(keyWorkflow(), failed.length + 2);
			const recovered = triggerItems(resubscribed).filter((json) => json.recovered);
			expect(idsOf(recovered)).toEqual([missedFirst.id, missedSecond.id].sort());
			for (const json of recovered) expect((json.recovered as Record<string, unknown>).reason).toBe('signingKeyChanged');

			// One subscription, the stale one removed; the next event is heard as usual.
			const [replacement] = liveAt('6a0e2d1c');
			expect(liveAt('6a0e2d1c')).toHaveLength(1);
			expect(replacement.id).not.toBe(original.id);
			const after = await clinic.sim.emit('patient', 'patient-updated', { id: 4, first_name: 'After' });
			expect(after.logs.map((log) => log.response_code)).toEqual([200]);
			const all = await clinic.server.waitForExecutions(keyWorkflow(), failed.length + 3);
			const items = triggerItems(all);
			expect(idsOf(items)).toEqual([before.id, missedFirst.id, missedSecond.id, after.id].sort());
			expect(items.find((json) => json.eventId === after.id)?.recovered).toBeUndefined();
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
			expect(idsOf(items.filter((json) => json.recovered))).toEqual(missed.map((record) => record.id).sort());
			for (const json of items.filter((item) => item.recovered)) {
				expect((json.recovered as Record<string, unknown>).reason).toBe('subscriptionDisabled');
			}
			expect(items.find((json) => json.eventId === created.id)?.recovered).toBeUndefined();

			// The disabled one removed, a live one per event; the replaced event is heard again.
			expect(clinic.sim.subscriptions().find((s) => s.id === updated.id)?.deleted_at).not.toBeNull();
			expect(liveAt('7b1f3e2d').map((s) => s.event_name).sort()).toEqual(['patient-created', 'patient-updated']);
			const heard = await clinic.sim.emit('patient', 'patient-updated', { id: 3, first_name: 'Heard' });
			const all = await clinic.server.waitForExecutions(disabledWorkflow(), 2);
			expect(idsOf(triggerItems(all))).toEqual([...missed.map((record) => record.id), created.id, heard.id].sort());
		}),
		5 * 60_000,
	);
});
