/**
 * Proves the end-to-end machinery on real n8n 1.123 and 2.41 with n8n's built-in nodes: a
 * server with owner, API key, workflows created through its REST API, webhook activation
 * (2.41: with and without its publication service), executions and deactivation, and a
 * failing `n8n execute` beside it reported as failed. A restart is clinicTrigger.test.ts's,
 * on the same three setups; a community package's workflow run with `n8n execute` and its
 * credential is clinicActions.test.ts's CLI run, on both versions.
 */
import {
	N8N_VERSIONS,
	executeWorkflow,
	nodeJson,
	parseLastJson,
	restImportWorkflows,
	startN8n,
	useN8nContext,
	withImportedCredentialIds,
	type N8nServer,
	type PublicationService,
	type WorkflowImport,
} from './harness';
import { storedRuns } from './support/runs';
import { chain, manualTrigger, setNode, webhookTrigger } from './support/workflows';

const TEST_TIMEOUT_MS = 5 * 60_000;

const failingWorkflow: WorkflowImport = chain('Smoke: Manual -> Stop and Error', [
	manualTrigger('Manual'),
	{ name: 'Fail', type: 'n8n-nodes-base.stopAndError', typeVersion: 1, parameters: { errorMessage: 'smoke failure on purpose' } },
]);

function webhookWorkflow(path: string, webhookId = `0b5f3c2e-1d6a-4c1b-9a55-${Buffer.from(path).toString('hex').slice(0, 12).padEnd(12, '0')}`): WorkflowImport {
	return chain(`Smoke: webhook ${path}`, [
		webhookTrigger(path, { webhookId }),
		setNode('Set', [
			{ name: 'received', value: '={{ $json.body.patient }}', type: 'string' },
			{ name: 'doubled', value: '={{ $json.body.n * 2 }}', type: 'number' },
		]),
	]);
}

test('parseLastJson finds the run after log lines and before trailing ones', () => {
	const text = [
		'n8n Task Broker ready on 127.0.0.1, port 5679',
		'{',
		'  "a": {',
		'    "b": [1, 2]',
		'  }',
		'}',
		'Execution error:',
		'{',
		'  "data": { "x": "}" }',
		'}',
		'NodeOperationError: boom',
		'    at stack',
	].join('\n');
	expect(parseLastJson(text)).toEqual({ data: { x: '}' } });
	expect(parseLastJson('{"one":1}\nlog')).toEqual({ one: 1 });
	expect(parseLastJson('no json')).toBeUndefined();
});

test('withImportedCredentialIds names the credentials by n8n\'s ids and says which ids no import gave', () => {
	const ids = new Map([['given1', 'n8nId1']]);
	const first = { name: 'A', type: 't', credentials: { clinicApi: { id: 'given1', name: 'One' } } };
	const nodes = [
		first,
		{ name: 'B', type: 't', credentials: { clinicApi: { id: 'n8nId1', name: 'One' }, other: { id: 'later', name: 'Two' } } },
		{ name: 'C', type: 't' },
	];
	const mapped = withImportedCredentialIds(nodes, ids);
	expect(mapped.nodes.map((node) => node.credentials)).toEqual([
		{ clinicApi: { id: 'n8nId1', name: 'One' } },
		{ clinicApi: { id: 'n8nId1', name: 'One' }, other: { id: 'later', name: 'Two' } },
		undefined,
	]);
	expect(mapped.unknown).toEqual(['later']);
	// The workflow given is left as it was.
	expect(first.credentials.clinicApi.id).toBe('given1');
});

const serverCases: Array<[string, PublicationService]> = [
	[N8N_VERSIONS.v1, 'default'],
	[N8N_VERSIONS.v2, 'default'],
	[N8N_VERSIONS.v2, 'off'],
];

describe.each(serverCases)('n8n %s (publication service: %s): server', (version, publicationService) => {
	const n8n = useN8nContext({ version, publicationService, label: 'server' });
	let server: N8nServer | undefined;

	it(
		'activates a webhook workflow, runs it, deactivates it',
		n8n.run(async (ctx) => {
			const path = `smoke-${ctx.major}-${publicationService}`;
			server = n8n.track(await startN8n(ctx));
			expect(ctx.auth?.apiKey).toBeTruthy();
			const activeAtImport = { ...webhookWorkflow(`${path}-active`, '0b5f3c2e-1d6a-4c1b-9a55-acc1ea7e0000'), active: true };
			const [workflowId, activeId] = await restImportWorkflows(server, [webhookWorkflow(path), activeAtImport]);
			// Imported `active: true`: live once the import answers, as after n8n's start for a CLI import.
			expect((await server.getWorkflow(activeId)).active).toBe(true);
			const early = await server.request('POST', `/webhook/${path}-active`, { patient: 'Eva', n: 2 });
			expect(early.body).toEqual({ received: 'Eva', doubled: 4 });

			const activated = await server.activateWorkflow(workflowId);
			expect(activated.id).toBe(workflowId);
			expect((await server.getWorkflow(workflowId)).active).toBe(true);
			if (ctx.asyncPublication) {
				expect((await server.publicationStatus(workflowId))?.status).toBe('published');
			} else {
				expect(await server.publicationStatus(workflowId)).toBeUndefined();
			}

			const answer = await server.request('POST', `/webhook/${path}`, { patient: 'Ana', n: 21 });
			expect(answer.body).toEqual({ received: 'Ana', doubled: 42 });

			// The answer carried the run's output, so the run is over: one request, exactly one run.
			const runs = await storedRuns(server, workflowId, () => true, 1);
			expect(runs).toHaveLength(1);
			const [execution] = runs;
			expect(execution.status).toBe('success');
			expect(execution.mode).toBe('webhook');
			expect(nodeJson(execution, 'Set')).toEqual([{ received: 'Ana', doubled: 42 }]);
			expect(nodeJson(execution, 'Webhook')[0]).toMatchObject({ body: { patient: 'Ana', n: 21 } });

			const deactivated = await server.deactivateWorkflow(workflowId);
			expect(deactivated.id).toBe(workflowId);
			expect((await server.getWorkflow(workflowId)).active).toBe(false);
			const gone = await server.request('POST', `/webhook/${path}`, { patient: 'x', n: 0 }, { expect: [404] });
			expect(gone.status).toBe(404);
		}),
		TEST_TIMEOUT_MS,
	);

	// The publication service changes activation only: one `n8n execute` a version is enough.
	if (publicationService === 'default') {
		it(
			'reports a failing `n8n execute` run beside the server with its error',
			n8n.run(async (ctx) => {
				const running = server?.running ? server : n8n.track(await startN8n(ctx));
				const [failingId] = await restImportWorkflows(running, [failingWorkflow]);
				const result = await executeWorkflow(ctx, failingId, { allowFailure: true });
				expect(result.ok).toBe(false);
				expect(result.exitCode === 1 || result.crashedOnExit).toBe(true);
				expect(result.errorMessage).toContain('smoke failure on purpose');
				expect(result.run?.data.resultData.lastNodeExecuted).toBe('Fail');
			}),
			TEST_TIMEOUT_MS,
		);
	}
});
