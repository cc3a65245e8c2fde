/**
 * n8n killed (SIGKILL, as the OOM killer or a pulled plug does) in the middle of a burst of
 * deliveries, the service's retries spent while it is down. n8n 2.x stores a run before it
 * saves the trigger's cursor and answers, so no event is lost: after the restart each one
 * has run, or sits in a run n8n kept (cut off: its items are there). n8n 2.41 runs the runs
 * it stored and had not started when it starts again; the first delivery after the start
 * runs those events a second time when the kill came between storing a run and saving the
 * cursor, as crash recovery may. Between restarts, no event runs twice. n8n 1.x saves static data and answers
 * before it stores the run, so a run lost at the crash is lost in n8n itself
 * (docs/triggers.md); its model is the simulation's (test/ClinicTrigger/simulation/suite.ts).
 */
import { N8N_VERSIONS, isFinished, readExecutionsWhen, sleep, startN8n, type Execution } from './harness';
import { eventIdsOf } from './support/runs';
import { useClinicN8n } from './support/clinicN8n';
import { clinicTriggerWorkflow, patientUpdated } from './support/workflows';

const TRIGGER = 'Patient Updated';
const BURST = 60;
const KILL_AFTER = 25;

describe.each([N8N_VERSIONS.v2])('Clinic Trigger, n8n %s killed in the middle of a burst', (version) => {
	const clinic = useClinicN8n({
		version,
		label: 'trigger-crash',
		// The service waits 5 s for an answer and retries a second later: its tries are spent while n8n is down.
		simulator: { allowHttpCallbacks: true, deliveryRetryDelayMs: 1_000, deliveryTimeoutMs: 5_000 },
		workflows: () => [clinicTriggerWorkflow({ name: 'Patient updated (crash)', webhookId: '3f6d2b8e-1c4a-4e7f-9b2d-5a8c0e6f1b05', nodeName: TRIGGER })],
	});
	const { n8n } = clinic;

	it(
		'loses no event: each ran or sits in a run n8n kept, none twice between restarts',
		n8n.run(async (ctx) => {
			const id = clinic.workflowIds[0];
			await clinic.server.activateWorkflow(id);
			const sent: Array<Promise<{ id: number }>> = [];
			for (let i = 0; i < BURST; i++) {
				sent.push(patientUpdated(clinic.sim, 70_000 + i));
				await sleep(40);
				if (i === KILL_AFTER) await clinic.server.kill();
			}
			const ids = (await Promise.all(sent)).map((event) => event.id);
			const unanswered = clinic.sim.events().filter((event) => ids.includes(event.id) && event.logs.every((log) => log.response_code === null));
			// The kill came in the middle: some events' tries all went unanswered.
			expect(unanswered.length).toBeGreaterThan(0);

			const restartedAt = Date.now();
			clinic.server = await startN8n(ctx);
			if (ctx.asyncPublication) await clinic.server.waitForPublication(id);
			// The first delivery after the restart runs what is in the log past the saved cursor.
			const firstAfterRestart = (await patientUpdated(clinic.sim, 70_100)).id;
			ids.push(firstAfterRestart);

			const runsOf = await readExecutionsWhen(clinic.server, id, `a run holding each of the ${ids.length} events`, {
				// Every run since the restart is over (one cut off by the kill may stay as n8n left it).
				ready: (listed) => listed.every((execution) => isFinished(execution) || Date.parse(execution.startedAt) < restartedAt),
				pick: (executions) => {
					const perEvent = new Map(ids.map((eventId) => [eventId, executions.filter((execution) => eventIdsOf(execution, TRIGGER).includes(eventId))]));
					return [...perEvent.values()].every((runs) => runs.length > 0) ? perEvent : undefined;
				},
				timeoutMs: 3 * 60_000,
			});
			// The one delivery after the restart started the runs since then (n8n may also run now the runs it stored before the kill and never started).
			const afterRestart = (run: Execution) => eventIdsOf(run, TRIGGER).includes(firstAfterRestart);
			const twiceBetweenRestarts = (runs: Execution[]) => runs.filter(afterRestart).length > 1 || runs.filter((run) => !afterRestart(run)).length > 1;
			const listRuns = ([eventId, runs]: [number, Execution[]]) => `${eventId}: ${runs.map((run) => `${run.id} ${run.status}${afterRestart(run) ? ' (after the restart)' : ''}`).join(', ')}`;
			expect([...runsOf].filter(([, runs]) => twiceBetweenRestarts(runs)).map(listRuns)).toEqual([]);
		}),
		10 * 60_000,
	);
});
