/**
 * The simulator as strict as the service, in real n8n 1.123 and 2.41: it refuses http://
 * callbacks, so n8n is subscribed at its public https address (WEBHOOK_URL) and the
 * deliveries reach its local port through a proxy, as in production behind a reverse proxy;
 * deliveries carry top-level identifier bodies as well as `{value}` ones (the spec allows
 * both); and the action node's 404, 422, 429 and 503 answers reach the user as error items.
 * (faults.test.ts covers the retried 429/503 and the answers that never come.)
 */
import type { Simulator } from '../simulator';
import { N8N_VERSIONS, nodeJson, runManually, type N8nServer, type WorkflowImport } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { runsWithValue, settledRuns } from './support/runs';
import { byId, chain, clinicNode, clinicTriggerWorkflow, manualTrigger } from './support/workflows';

/** n8n's public address; the simulator's proxy forwards it to n8n's local port. */
const PUBLIC_ORIGIN = 'https://n8n.clinic.test';
const TRIGGER_NODE = 'Patient Updated';

function triggerWorkflow(): WorkflowImport {
	// No "Allow Insecure URL": the address n8n registers is https.
	return clinicTriggerWorkflow({ name: 'Patient updates (https only)', webhookId: '7c2e9a41-5b3d-4f8e-9a1c-2d4b6e8f0a24', nodeId: 'strict-trigger', nodeName: TRIGGER_NODE, options: {} });
}

/** Manual Trigger -> one Clinic node per error answer, each continuing on fail with an error item. */
function errorsWorkflow(): WorkflowImport {
	const steps: Array<[string, Record<string, unknown>]> = [
		['Not Found', { resource: 'consultation', operation: 'get', consultationId: byId(999) }],
		[
			'Refused URL',
			// The node refuses http:// itself unless told otherwise: let the service refuse it.
			{
				resource: 'webhookSubscription',
				operation: 'create',
				url: 'http://127.0.0.1:9/hook',
				event: 'patient:patient-updated',
				subscriptionOptions: { allowInsecureUrl: true },
			},
		],
		['Unavailable', { resource: 'consultation', operation: 'get', consultationId: byId(2) }],
		// Last: its Retry-After holds back every later request to the host for that long.
		['Too Many Requests', { resource: 'consultation', operation: 'get', consultationId: byId(3) }],
	];
	return chain('Error answers', [
		manualTrigger(),
		...steps.map(([name, parameters]) => clinicNode(name, parameters, { typeVersion: 1, onError: 'continueRegularOutput' })),
	]);
}

describe.each([
	['1.123', N8N_VERSIONS.v1],
	['2.41', N8N_VERSIONS.v2],
])('a service as strict as the spec, n8n %s', (_label, version) => {
	let sim: Simulator;
	let triggerId: string;
	let errorsId: string;

	const clinic = useClinicN8n({
		version,
		label: 'strict',
		env: { WEBHOOK_URL: `${PUBLIC_ORIGIN}/` },
		// https callbacks only (no allowHttpCallbacks), delivered to n8n's local port.
		simulator: (ctx) => ({ callbackProxy: { from: PUBLIC_ORIGIN, to: ctx.baseUrl }, deliveryRetryDelayMs: 100 }),
		workflows: () => [triggerWorkflow(), errorsWorkflow()],
	});
	const { n8n } = clinic;
	beforeAll(() => {
		sim = clinic.sim;
		[triggerId, errorsId] = clinic.workflowIds;
	});

	const live = () => sim.subscriptions().filter((s) => s.deleted_at === null && s.status === 'enabled');
	/** n8n running with the trigger active. */
	const activeTrigger = async (): Promise<N8nServer> => {
		const started = clinic.server;
		if (!(await started.getWorkflow(triggerId)).active) await started.activateWorkflow(triggerId);
		return started;
	};

	it(
		"the action node's 404, 422 (an http:// callback), 429 and 503 answers become error items that say what the service answered",
		n8n.run(async () => {
			sim.addFault({ kind: 'status', status: 429, retryAfterSeconds: 120, host: 'api', method: 'GET', path: '/api/v1/consultations/3' });
			sim.addFault({ kind: 'status', status: 503, host: 'api', method: 'GET', path: '/api/v1/consultations/2' });
			sim.clearLog();
			const result = await runManually(clinic.server, errorsId, { allowFailure: true });
			sim.clearFaults();
			const item = (node: string) => nodeJson(result.run!, node);
			expect(item('Not Found')).toEqual([expect.objectContaining({ error: expect.stringMatching(/Consultation 999 was not found/), httpCode: '404' })]);
			expect(item('Refused URL')).toEqual([expect.objectContaining({ httpCode: '422' })]);
			expect(JSON.stringify(item('Refused URL'))).toContain('must be an HTTPS URL');
			expect(item('Too Many Requests')).toEqual([
				expect.objectContaining({ error: expect.stringContaining('asked n8n to wait 120 s'), httpCode: '429' }),
			]);
			expect(item('Unavailable')).toEqual([expect.objectContaining({ httpCode: '503' })]);
			// The refused subscription was not made; each faulted read was sent once.
			expect(live()).toEqual([]);
			const sent = (path: string) => sim.log.filter((entry) => entry.method === 'GET' && entry.path === path).length;
			expect([sent('/api/v1/consultations/3'), sent('/api/v1/consultations/2')]).toEqual([1, 1]);
		}),
		5 * 60_000,
	);

	it(
		'https only: n8n subscribes at its public https address, and a delivery through the proxy starts one run',
		n8n.run(async () => {
			const running = await activeTrigger();
			expect(live().map((s) => new URL(s.url).origin)).toEqual([PUBLIC_ORIGIN]);
			const record = await sim.emit('patient', 'patient-updated', { id: 2, first_name: 'through the proxy' });
			expect(record.logs.map((log) => [new URL(log.target_url).origin, log.response_code])).toEqual([[PUBLIC_ORIGIN, 200]]);
			const { runs } = await settledRuns(sim, running, triggerId, record.id, runsWithValue(TRIGGER_NODE, record.value));
			expect(runs).toHaveLength(1);
			expect(nodeJson(runs[0], TRIGGER_NODE)[0]).toMatchObject({ event: 'patient-updated', eventId: record.id, value: record.value });
		}),
		5 * 60_000,
	);

	it(
		'a top-level identifier body starts one run with that object as the value, repeated or not',
		n8n.run(async () => {
			const running = await activeTrigger();
			sim.setDeliveryBody('top-level');
			sim.setDuplicateDeliveries('sequential');
			try {
				const record = await sim.emit('patient', 'patient-updated', { id: 4, first_name: 'top level' });
				expect(record.logs.map((log) => [log.request, log.response_code])).toEqual([
					[JSON.stringify(record.value), 200],
					[JSON.stringify(record.value), 200],
				]);
				const { runs } = await settledRuns(sim, running, triggerId, record.id, runsWithValue(TRIGGER_NODE, record.value));
				expect(runs).toHaveLength(1);
				expect(nodeJson(runs[0], TRIGGER_NODE)[0]).toMatchObject({ eventId: record.id, value: record.value });
			} finally {
				sim.setDeliveryBody('value');
				sim.setDuplicateDeliveries('off');
			}
		}),
		5 * 60_000,
	);
});
