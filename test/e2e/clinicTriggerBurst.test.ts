/**
 * The Clinic Trigger under a burst, as a clinic's service sends after an outage: 300
 * distinct events logged within a moment, each delivered twice (every other event's copies
 * at once, the others' one after the other: one burst a version covers both). Each event runs exactly once, with its own event id, in a few runs of
 * many items (deliveries arriving together share one read of the log). None is lost, also
 * when n8n refuses every try of some events at its door ("Database is not ready!" under
 * load): those run with the next delivery, which the test sends once n8n answers again.
 * The simulator waits as long as n8n needs to answer (no retries of slow answers), so every
 * run n8n starts is one it answered for, and the count is exact.
 */
import { ALL_N8N_VERSIONS, nodeJson, waitFor, type Execution, type N8nServer, type WorkflowImport } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { acceptedAsNew, storedRuns } from './support/runs';
import { clinicTriggerWorkflow } from './support/workflows';

const BURST = 300;
const TRIGGER = 'Patient Updated';

function patientUpdatedWorkflow(): WorkflowImport {
	return clinicTriggerWorkflow({ name: 'Patient updated (burst)', webhookId: '7c2e9a41-5b3d-4f8e-9a16-3d5b7c9e1f24', nodeName: TRIGGER, output: 'simple' });
}

type Copies = 'concurrent' | 'sequential';

const FAST_RETRY_MS = 700;

/** n8n's answer while its database ping has timed out, given before any trigger sees the request. */
const NOT_READY = 'Database is not ready!';

/**
 * How the service retries a refused delivery: the spec leaves it open. Fast, three tries
 * within about two seconds can all fall within one refusal by n8n ("Database is not ready!",
 * before any trigger sees them, when its database ping times out on a loaded machine): that
 * event never reached the trigger, and runs with the next delivery (it is in the log past
 * the trigger's cursor). Slower retries only give n8n more time, so the fast schedule alone
 * is run, with both kinds of copies in one burst: at once (both copies of an event reaching
 * the trigger together) and one after the other.
 */
const RETRY_SCHEDULES: Array<[string, number]> = [['fast (three tries within about 2 s)', FAST_RETRY_MS]];

/** Every other event's copies at once, the others' one after the other. */
const copiesOf = (index: number): Copies => (index % 2 === 0 ? 'concurrent' : 'sequential');

/**
 * Until n8n's database answers its ping: once a ping timed out (SQLite on a busy machine),
 * n8n answers every request 503 "Database is not ready!" before any trigger sees it
 * (docs/triggers.md says so for operators). The burst counts the trigger, not that.
 */
async function untilDatabaseAnswers(server: N8nServer) {
	const ready = async () => (await fetch(`${server.baseUrl}/healthz/readiness`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined))?.ok || undefined;
	await waitFor(`n8n ${server.ctx.version}'s database to answer its ping`, ready, { timeoutMs: 120_000, intervalMs: 500 });
}

describe.each(ALL_N8N_VERSIONS)('Clinic Trigger under a burst, n8n %s', (version) => {
	describe.each(RETRY_SCHEDULES)('a service retrying %s', (_retries, retryDelayMs) => {
		const clinic = useClinicN8n({
			version,
			label: `burst-${retryDelayMs}`,
			// The service waits for each answer as long as n8n takes (n8n 2.x answers once the run is
			// stored), and retries a refused delivery `retryDelayMs` later, three times.
			simulator: { allowHttpCallbacks: true, deliveryRetryDelayMs: retryDelayMs, deliveryTimeoutMs: 10 * 60_000 },
			workflows: () => [patientUpdatedWorkflow()],
		});
		const { n8n } = clinic;
		const workflowId = () => clinic.workflowIds[0];

		beforeAll(async () => {
			await clinic.server.activateWorkflow(workflowId());
		});

		/** Emits BURST events at once, each delivered twice as `copiesOf` says; answers the runs they started. */
		async function burst() {
			// The burst's patients have ids of their own (ids stay in the trigger's Simplified output).
			const firstId = 10_000;
			await untilDatabaseAnswers(clinic.server);
			const logBefore = clinic.server.log().length;
			// The service takes each event's duplicate mode when it is emitted.
			const events = await Promise.all(
				Array.from({ length: BURST }, async (_, i) => {
					clinic.sim.setDuplicateDeliveries(copiesOf(i));
					return await clinic.sim.emit('patient', 'patient-updated', { id: firstId + i, first_name: 'Ana' });
				}),
			);
			clinic.sim.setDuplicateDeliveries('off');
			// Each event's tries went out and got an answer (n8n may refuse one it cannot take now: a
			// 503 starts nothing), so every run n8n started is one it answered for.
			for (const event of events) {
				expect(event.logs.length).toBeGreaterThanOrEqual(2);
				expect(event.logs.filter((log) => log.response_code === null)).toEqual([]);
			}
			const acceptedOf = (event: (typeof events)[number]) =>
				acceptedAsNew(event.logs.map((log) => ({ status: log.response_code, text: log.response })));
			// Events whose every try n8n refused at its door (before any trigger): the next delivery runs them.
			const refused = events.filter((event) => event.logs.every((log) => log.response_code === 503 && log.response.includes(NOT_READY)));
			if (refused.length > 0) {
				// n8n's own log of this burst shows why: its database ping got no answer in time.
				expect(clinic.server.log().slice(logBefore)).toContain('Database connection timed out');
				process.stdout.write(`burst ${version}: n8n refused every try of ${refused.length} event(s): "${NOT_READY}"\n`);
			}
			// The next delivery, once n8n's database answers: it runs whatever the burst left.
			await untilDatabaseAnswers(clinic.server);
			const next = await clinic.sim.emit('patient', 'patient-updated', { id: firstId + BURST, first_name: 'Ana' });
			expect(next.logs.at(-1)?.response_code).toBe(200);
			const all = [...events, next];
			// Every delivery n8n accepted as new started a run (one of many events, or of none left over).
			const accepted = all.reduce((sum, event) => sum + acceptedOf(event), 0);
			const patientOf = (json: { value?: unknown }) => Number((json.value as { id?: unknown } | undefined)?.id);
			const ofThisBurst = (execution: Execution) => nodeJson(execution, TRIGGER).some((json) => patientOf(json) >= firstId && patientOf(json) <= firstId + BURST);
			const runs = await storedRuns(clinic.server, workflowId(), ofThisBurst, accepted, 10 * 60_000);
			process.stdout.write(`burst ${version}: ${all.length} events ran in ${runs.length} execution(s)\n`);
			return { events: all, accepted, runs };
		}

		/** Each event ran once with its own id; no item without an id. */
		function expectOneRunPerEvent({ events, accepted, runs }: Awaited<ReturnType<typeof burst>>) {
			expect(runs).toHaveLength(accepted);
			const items = runs.flatMap((run) => nodeJson(run, TRIGGER)).filter((json) => Number.isFinite(Number((json.value as { id?: unknown }).id)));
			expect(items.filter((json) => typeof json.eventId !== 'number')).toEqual([]);
			const times = new Map<number, number>();
			for (const json of items) times.set(json.eventId as number, (times.get(json.eventId as number) ?? 0) + 1);
			const notOnce = events.filter((event) => times.get(event.id) !== 1).map((event) => event.id);
			expect(notOnce).toEqual([]);
			// A few runs of many events, not one per delivery.
			expect(runs.length).toBeLessThan(events.length / 2);
		}

		it(
			'300 events, each delivered twice (half the copies at once, half one after the other): one run per event, none twice',
			n8n.run(async () => {
				expectOneRunPerEvent(await burst());
			}),
			20 * 60_000,
		);
	});
});
