/**
 * "Parallel Requests: Automatic", the node's default, inside real n8n 2.41: output order
 * and pairing with many items in flight, one sign-in, and one limiter per service host
 * for the whole n8n process, so two executions at once stay within the maximum together.
 */
import { MAX_PARALLEL_REQUESTS } from '../../nodes/Clinic/actions/scheduler';
import { N8N_VERSIONS, nodeItems, runManually, type WorkflowImport } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { storedRuns } from './support/runs';
import { chain, clinicNode, manualTrigger, webhookTrigger, type ChainNode } from './support/workflows';

const ITEMS = 150;
/** Maximum Parallel Requests of the two concurrent workflows. */
const SHARED_MAXIMUM = 6;

/** Clinic Consultation Get (version 1, plain id) of each item's `id`. */
function clinicGet(options: Record<string, unknown>): ChainNode {
	return clinicNode('Clinic', { resource: 'consultation', operation: 'get', consultationId: '={{ $json.id }}', options }, { typeVersion: 1 });
}

function items(code: string): ChainNode {
	return { name: 'Items', type: 'n8n-nodes-base.code', typeVersion: 2, parameters: { jsCode: code } };
}

/** Manual -> 150 items (ids cycling 1..3) -> Clinic Consultation Get at its defaults. */
const defaultsWorkflow: WorkflowImport = chain(
	'Parallel Requests: defaults',
	[manualTrigger('Manual'), items(`return Array.from({ length: ${ITEMS} }, (_, i) => ({ json: { id: (i % 3) + 1, index: i } }));`), clinicGet({})],
);

/** Webhook -> 120 items asking for consultation `id` -> Clinic with Maximum Parallel Requests 6. */
function webhookWorkflow(path: string, id: number): WorkflowImport {
	return chain(
		`Parallel Requests: shared limiter ${path}`,
		[
			webhookTrigger(path, { webhookId: `6b1f0c2e-5d6a-4c1b-9a55-00000000000${id}` }),
			items(`return Array.from({ length: 120 }, () => ({ json: { id: ${id} } }));`),
			clinicGet({ maxParallelRequests: SHARED_MAXIMUM }),
		],
	);
}

describe(`Parallel Requests: Automatic in n8n ${N8N_VERSIONS.v2}`, () => {
	const clinic = useClinicN8n({
		version: N8N_VERSIONS.v2,
		label: 'parallel',
		laneServer: true,
		simulator: { allowHttpCallbacks: true },
		workflows: () => [defaultsWorkflow, webhookWorkflow('shared-a', 1), webhookWorkflow('shared-b', 2)],
	});
	const { n8n } = clinic;
	const defaultsId = () => clinic.workflowIds[0];
	const sharedIds = () => clinic.workflowIds.slice(1);

	it(
		'at the defaults: many requests in flight, outputs in input order and paired, one sign-in',
		n8n.run(async () => {
			clinic.sim.reset();
			clinic.sim.setLatency(20);
			const result = await runManually(clinic.server, defaultsId());
			const output = nodeItems(result.run!, 'Clinic');
			expect(output).toHaveLength(ITEMS);
			expect(output.map((item) => item.json.id)).toEqual(Array.from({ length: ITEMS }, (_, i) => (i % 3) + 1));
			expect(output.map((item) => item.pairedItem)).toEqual(Array.from({ length: ITEMS }, (_, item) => ({ item })));
			expect(clinic.sim.tokenRequests()).toBe(1);
			// Automatic grew past the first few requests in flight, within the default maximum.
			expect(clinic.sim.inFlight().peak).toBeGreaterThan(8);
			expect(clinic.sim.inFlight().peak).toBeLessThanOrEqual(MAX_PARALLEL_REQUESTS);
		}),
		5 * 60_000,
	);

	it(
		`two executions at once in one n8n process share the host's limiter: together at most ${SHARED_MAXIMUM} in flight`,
		n8n.run(async () => {
			for (const id of sharedIds()) await clinic.server.activateWorkflow(id);
			clinic.sim.reset();
			clinic.sim.setLatency(25);
			const answers = await Promise.all(
				['shared-a', 'shared-b'].map(async (path) => await fetch(clinic.server.webhookUrl(path), { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })),
			);
			expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
			// Each answer carried its run's output, so both runs are over: one run each, exactly.
			const [first, second] = await Promise.all(sharedIds().map(async (id) => await storedRuns(clinic.server, id, () => true, 1)));
			expect([first.length, second.length]).toEqual([1, 1]);
			expect([first[0].status, second[0].status]).toEqual(['success', 'success']);

			const paths = clinic.sim.log.filter((entry) => entry.path.startsWith('/api/v1/consultations/')).map((entry) => entry.path);
			expect(paths.filter((path) => path.endsWith('/1'))).toHaveLength(120);
			expect(paths.filter((path) => path.endsWith('/2'))).toHaveLength(120);
			// The two executions overlapped: their requests interleave in the service's log...
			const firstOfB = paths.indexOf('/api/v1/consultations/2');
			const lastOfA = paths.lastIndexOf('/api/v1/consultations/1');
			expect(firstOfB).toBeLessThan(lastOfA);
			// ...and yet never more than the maximum were in flight together (each alone reaches it).
			expect(clinic.sim.inFlight().peak).toBe(SHARED_MAXIMUM);
		}),
		5 * 60_000,
	);
});
