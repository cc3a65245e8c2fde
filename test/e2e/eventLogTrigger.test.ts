/**
 * The Clinic Event Log Trigger inside a running n8n (one n8n per version, polling every
 * 10 s; the example polls every minute, as shipped): activation starts from now; each new event starts the workflow exactly once
 * over several polls, across an n8n restart, and after n8n was stopped while events were
 * emitted. Each count is exact and, where no later batch follows, taken only after one more
 * poll read the log: a repeat from that poll would show. The simulator reads the GET /events
 * parameters only from the JSON body (as the spec declares) before the restart and only from
 * the query string after it, so both places are proven in real n8n. Then the example workflow runs active: a finished
 * consultation from the event log gets its invoice signed and e-mailed.
 */
import { ALL_N8N_VERSIONS, nodeJson, startN8n } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { EVENT_LOG_TRIGGER, eventLogRuns, eventLogWorkflow, idsPerRun } from './support/eventLog';
import { loadExample } from './support/examples';

const EXAMPLE = 'consultation-finished-event-log-sign-email.json';

describe.each(ALL_N8N_VERSIONS)('Clinic Event Log Trigger in n8n %s', (version) => {
	const clinic = useClinicN8n({
		version,
		label: 'event-log',
		simulator: { allowHttpCallbacks: true },
		workflows: (sim) => [eventLogWorkflow(), loadExample(EXAMPLE, sim)],
	});
	const { n8n } = clinic;

	const finish = async (count: number): Promise<number[]> => {
		const ids: number[] = [];
		for (let i = 0; i < count; i++) {
			ids.push((await clinic.sim.emit('consultation', 'consultation-finished', { id: 500 + clinic.sim.events().length })).id);
		}
		return ids;
	};
	/**
	 * Waits until the runs together carry as many ids as `ids` (with `nextPoll`, also for one
	 * more poll after them), then compares exactly: a missing, extra or repeated id fails. A
	 * check without `nextPoll` is followed by later polls that a later exact check counts.
	 */
	const waitForIds = async (ids: number[], nextPoll = false) => {
		const executions = await eventLogRuns(clinic.sim, clinic.server, clinic.workflowIds[0], ids.length, { nextPoll });
		expect(idsPerRun(executions).flat()).toEqual(ids);
		return executions;
	};

	it(
		'emits each new event exactly once over several polls, across a restart and after downtime',
		n8n.run(async (ctx) => {
			// Old events: the first activation starts after them.
			await finish(3);
			await clinic.server.activateWorkflow(clinic.workflowIds[0]);
			if (ctx.asyncPublication) await clinic.server.waitForPublication(clinic.workflowIds[0]);
			const first = await finish(3);
			await waitForIds(first);
			const second = await finish(2);
			const executions = await waitForIds([...first, ...second]);
			expect(executions.length).toBeGreaterThanOrEqual(2);
			expect(executions.every((e) => e.status === 'success')).toBe(true);
			// The newest execution starts with the oldest of its events.
			expect(nodeJson(executions[0], EVENT_LOG_TRIGGER)[0]).toMatchObject({
				event: 'consultation-finished',
				topic: `${clinic.sim.topicPrefix}.consultation`,
				eventId: second[0],
				createdAt: expect.any(String),
				value: { id: expect.any(Number) },
			});
			// Only the spec's JSON body carried the parameters: a GET body reached the service.
			const reads = clinic.sim.log.filter((entry) => entry.path === '/events');
			expect(reads.length).toBeGreaterThan(0);
			for (const read of reads) {
				expect(read.body).toMatchObject({ topic: `${clinic.sim.topicPrefix}.consultation`, name: 'consultation-finished' });
			}

			// n8n stops; consultations finish while it is down; it starts again.
			await clinic.server.stop();
			const whileDown = await finish(4);
			clinic.sim.setEventParams('query');
			clinic.server = await startN8n(ctx);
			if (ctx.asyncPublication) await clinic.server.waitForPublication(clinic.workflowIds[0]);
			await waitForIds([...first, ...second, ...whileDown]);
			const after = await finish(2);
			await waitForIds([...first, ...second, ...whileDown, ...after], true);
			await clinic.server.deactivateWorkflow(clinic.workflowIds[0]);
		}),
		8 * 60_000,
	);

	it(
		'the example: a finished consultation read from the event log gets its invoice signed and e-mailed, once',
		n8n.run(async (ctx) => {
			await clinic.server.activateWorkflow(clinic.workflowIds[1]);
			if (ctx.asyncPublication) await clinic.server.waitForPublication(clinic.workflowIds[1]);
			const consultation = clinic.sim.data.consultations.get(1)!;
			const record = await clinic.sim.emit('consultation', 'consultation-finished', { id: consultation.id, encounter_id: consultation.encounter_id });
			// One run, counted after the next poll read the log again.
			const runs = await eventLogRuns(clinic.sim, clinic.server, clinic.workflowIds[1], 1, { nextPoll: true, triggerNode: 'Consultation Finished' });
			expect(idsPerRun(runs, 'Consultation Finished')).toEqual([[record.id]]);
			const [execution] = runs;
			expect(execution.status).toBe('success');
			expect(nodeJson(execution, 'Consultation Finished')).toEqual([
				expect.objectContaining({ event: 'consultation-finished', eventId: record.id, value: { id: 1, encounter_id: consultation.encounter_id } }),
			]);
			expect(nodeJson(execution, 'Sign Invoice')[0]).toMatchObject({ id: 1, signed_at: expect.any(String) });
			expect(nodeJson(execution, 'Email Invoice')).toHaveLength(1);
			expect(clinic.sim.data.invoices.get(1)!.signed_at).not.toBeNull();
			await clinic.server.deactivateWorkflow(clinic.workflowIds[1]);
			expect(await clinic.server.listExecutions(clinic.workflowIds[1])).toHaveLength(1);
		}),
		5 * 60_000,
	);
});
