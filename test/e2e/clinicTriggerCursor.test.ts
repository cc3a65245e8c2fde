/**
 * The Clinic Trigger's record of what ran, in a running n8n, in the cases its simulation
 * (test/ClinicTrigger/simulation/suite.ts) plays in a model: a transaction that commits
 * late behind hundreds of other events, a backlog of more than a thousand behind a slow log of
 * small pages, an Event Log Trigger polling in the same workflow, and the workflow deactivated
 * and activated again (a save or republish) while events arrive. Each event runs exactly once.
 */
import { ALL_N8N_VERSIONS, nodeJson, sleep, waitFor, type Execution, type WorkflowImport } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { eventLogWorkflow, EVERY_TEN_SECONDS } from './support/eventLog';
import { eventIdsOf, settledRunsPerEvent } from './support/runs';
import { clinicTriggerWorkflow, patientUpdated } from './support/workflows';

const TRIGGER = 'Patient Updated';
const POLLER = 'Consultation Finished';

const triggerWorkflow = (name: string, webhookId: string, events?: string[]) => clinicTriggerWorkflow({ name, webhookId, nodeName: TRIGGER, events });

/** The Clinic Trigger and an Event Log Trigger (finished consultations, polling every 10 s) in one workflow. */
function withPoller(): WorkflowImport {
	const trigger = triggerWorkflow('Patient updated, with a poller', '3f6d2b8e-1c4a-4e7f-9b2d-5a8c0e6f1b01');
	const poller = eventLogWorkflow({ pollTimes: EVERY_TEN_SECONDS });
	return {
		...trigger,
		nodes: [...trigger.nodes, { ...poller.nodes[0], position: [0, 300] }],
	};
}

const WORKFLOWS = [
	triggerWorkflow('Patient updated (late commit)', '3f6d2b8e-1c4a-4e7f-9b2d-5a8c0e6f1b02'),
	triggerWorkflow('Patient updated (backlog)', '3f6d2b8e-1c4a-4e7f-9b2d-5a8c0e6f1b03', ['patient:patient-updated', 'patient:patient-created']),
	withPoller(),
	triggerWorkflow('Patient updated (saved while events arrive)', '3f6d2b8e-1c4a-4e7f-9b2d-5a8c0e6f1b04'),
];

// A run of the poller alone holds none of the Clinic Trigger's events.
const eventIdsOfTrigger = (execution: Execution) => eventIdsOf(execution, TRIGGER);
describe.each(ALL_N8N_VERSIONS)("Clinic Trigger's record of what ran, n8n %s", (version) => {
	const clinic = useClinicN8n({
		version,
		label: 'trigger-cursor',
		laneServer: true,
		// The service waits 5 s for an answer (the trigger answers within 4 s) and retries a second later.
		simulator: {
			allowHttpCallbacks: true,
			deliveryRetryDelayMs: 1_000,
			deliveryTimeoutMs: 5_000,
		},
		workflows: () => WORKFLOWS,
	});
	const { n8n } = clinic;

	/** Runs `test` with the workflow active, and deactivates it however the test ends (an active one would take the next test's events too). */
	async function whileActive(workflowId: string, test: () => Promise<void>) {
		await clinic.server.activateWorkflow(workflowId);
		try {
			await test();
		} finally {
			await clinic.server.deactivateWorkflow(workflowId);
		}
	}

	/** Every event ran in exactly one run, once in it; every delivery try got an answer in time. */
	async function expectEachOnce(workflowId: string, eventIds: number[]) {
		const perEvent = await settledRunsPerEvent(clinic.sim, clinic.server, workflowId, eventIds, eventIdsOfTrigger, { timeoutMs: 3 * 60_000 }).catch((error: Error) => {
			const answers = clinic.sim
				.events()
				.filter((event) => eventIds.includes(event.id))
				.map((event) => `${event.id}: ${event.logs.map((log) => `${log.response_code} ${log.response.slice(0, 60)}`).join(' / ')}`);
			throw new Error(`${error.message}\nanswers:\n${answers.slice(0, 40).join('\n')}`);
		});
		const notOnce = eventIds.filter((id) => perEvent.get(id)!.length !== 1 || eventIdsOfTrigger(perEvent.get(id)![0]).filter((ran) => ran === id).length !== 1);
		expect(notOnce).toEqual([]);
		// Each try that got no answer, with what the service saw and when (the try ended `created_at`).
		const unanswered = clinic.sim
			.events()
			.filter((event) => eventIds.includes(event.id) && event.logs.some((log) => log.response_code === null))
			.map((event) => `${event.id} logged ${event.created_at}: ${event.logs.map((log) => `${log.response_code} at ${log.created_at} ${log.response.slice(0, 60)}`).join(' / ')}`);
		expect(unanswered).toEqual([]);
	}

	it(
		'a late commit behind 400 events of other kinds runs once',
		n8n.run(async () => {
			const id = clinic.workflowIds[0];
			await whileActive(id, async () => {
				const first = await patientUpdated(clinic.sim, 1);
				const late = clinic.sim.emitLate('patient', 'patient-updated', { id: 2, first_name: 'Ana' }, 8_000);
				clinic.sim.seedEvents(400, 'consultation', 'consultation-finished');
				const after = await patientUpdated(clinic.sim, 3);
				await late.record;
				await expectEachOnce(id, [first.id, late.id, after.id]);
			});
		}),
		10 * 60_000,
	);

	it(
		'a backlog of 1,200 behind a slow log of 30-event pages runs completely, once each, as deliveries resume',
		n8n.run(async () => {
			const id = clinic.workflowIds[1];
			await whileActive(id, async () => {
				const stopped = clinic.sim.subscriptions().find((s) => !s.deleted_at && s.status === 'enabled' && s.event_name === 'patient-updated' && s.url.includes('1b03'));
				expect(stopped).toBeDefined();
				clinic.sim.stopSubscription(stopped!.id, 'disable');
				const backlog: number[] = [];
				for (let i = 0; i < 1_200; i++) backlog.push((await patientUpdated(clinic.sim, 10_000 + i)).id);
				clinic.sim.setEventsPageCap(30);
				clinic.sim.setLatency(250);
				try {
					// A delivery of the trigger's other event: it notices the stopped subscription and resubscribes.
					const wake = await clinic.sim.emit('patient', 'patient-created', {
						id: 20_000,
						first_name: 'Ana',
					});
					const resumed: number[] = [];
					for (let i = 0; i < 20; i++) {
						resumed.push((await patientUpdated(clinic.sim, 30_000 + i)).id);
						await sleep(1_000);
					}
					await expectEachOnce(id, [...backlog, ...resumed]);
					expect(wake.logs.at(-1)?.response_code).toBe(200);
				} finally {
					clinic.sim.setLatency(0);
					clinic.sim.setEventsPageCap(undefined);
				}
			});
		}),
		15 * 60_000,
	);

	it(
		'an Event Log Trigger polling in the same workflow makes nothing run twice',
		n8n.run(async () => {
			const id = clinic.workflowIds[2];
			await whileActive(id, async () => {
				const ran: number[] = [];
				for (let round = 0; round < 2; round++) {
					ran.push((await patientUpdated(clinic.sim, 40_000 + round)).id);
					// A poll that finds an event makes n8n save the poller's copy of the static data, from activation.
					const consultation = await clinic.sim.emit('consultation', 'consultation-finished', { id: 900 + round });
					await waitFor(
						`the poll that finds consultation event ${consultation.id}`,
						async () => (await clinic.server.listExecutions(id)).some((execution) => nodeJson(execution, POLLER).some((json) => json.eventId === consultation.id)) || undefined,
						{ timeoutMs: 60_000, intervalMs: 1_000 },
					);
				}
				ran.push((await patientUpdated(clinic.sim, 40_002)).id);
				await expectEachOnce(id, ran);
			});
		}),
		10 * 60_000,
	);

	it(
		'a workflow deactivated and activated again while events arrive loses none and runs none twice',
		n8n.run(async () => {
			const id = clinic.workflowIds[3];
			await whileActive(id, async () => {
				const sent: Array<Promise<{ id: number }>> = [patientUpdated(clinic.sim, 50_000)];
				const arriving = (async () => {
					for (let i = 1; i < 10; i++) {
						await sleep(400);
						sent.push(patientUpdated(clinic.sim, 50_000 + i));
					}
				})();
				await sleep(1_000);
				await clinic.server.deactivateWorkflow(id);
				await sleep(300);
				await clinic.server.activateWorkflow(id);
				await arriving;
				const ids = (await Promise.all(sent)).map((event) => event.id);
				// Events logged while it was inactive were delivered nowhere: the next delivery runs them.
				ids.push((await patientUpdated(clinic.sim, 50_100)).id);
				await expectEachOnce(id, ids);
			});
		}),
		10 * 60_000,
	);
});
