/**
 * The Clinic node as tools of n8n's AI Agent (n8n 2.41), with n8n's OpenAI Chat Model
 * pointed at a scripted fake model (support/fakeModel.ts) through its credential's base
 * URL. The fake model picks tools by their descriptions alone: the tool nodes are renamed
 * to "Tool 1"… before the run, so nothing but the descriptions tells them apart.
 */
import { N8N_VERSIONS, nodeJson, runManually } from './harness';
import type { WorkflowImport } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { startFakeModel, type FakeModel } from './support/fakeModel';
import { fakeModelCredential, loadExample, simulatorCredentials } from './support/examples';

const EXAMPLE = 'ai-agent-invoice-assistant.json';

/** The example with its Clinic tool nodes renamed to neutral names. */
function withNeutralToolNames(workflow: WorkflowImport): { workflow: WorkflowImport; names: Map<string, string> } {
	const names = new Map<string, string>();
	const nodes = (workflow.nodes as Array<{ name: string; type: string }>).map((node) => {
		if (node.type !== 'n8n-nodes-clinic.clinicTool') return node;
		const neutral = `Tool ${names.size + 1}`;
		names.set(node.name, neutral);
		return { ...node, name: neutral };
	});
	const connections = Object.fromEntries(
		Object.entries(workflow.connections as Record<string, unknown>).map(([name, value]) => [names.get(name) ?? name, value]),
	);
	return { workflow: { ...workflow, nodes, connections } as WorkflowImport, names };
}

describe('Clinic tools in n8n\'s AI Agent (n8n 2.41.1)', () => {
	let model: FakeModel;
	let names = new Map<string, string>();
	const clinic = useClinicN8n({
		version: N8N_VERSIONS.v2,
		label: 'ai-agent',
		laneServer: true,
		prepare: async () => {
			model = await startFakeModel();
		},
		credentials: (sim) => [...simulatorCredentials(sim), fakeModelCredential(model.baseUrl)],
		workflows: (sim) => {
			const neutral = withNeutralToolNames(loadExample(EXAMPLE, sim));
			names = neutral.names;
			return [neutral.workflow];
		},
	});
	const { n8n } = clinic;

	afterAll(async () => {
		await model?.close();
	});

	it(
		'the model finds the tools by their descriptions; the refused e-mail reaches it with the reason',
		n8n.run(async () => {
			const result = await runManually(clinic.server, clinic.workflowIds[0]);

			// What n8n told the model about each tool: the example's tool descriptions (Set Manually),
			// not the short action names a person sees on the canvas.
			const tools = model.requests[0].body.tools ?? [];
			const described = (node: string) => tools.find((tool) => tool.name === names.get(node)?.replace(' ', '_'))?.description ?? '';
			expect(described('Email Invoice')).toMatch(/must be signed first: an unsigned invoice is refused/);
			expect(described('Sign Invoice')).toMatch(/cannot be undone: sign only when the user asks/);
			expect(described('Get Invoice of Encounter')).toMatch(/encounter ID, a whole number such as 880/);
			// Model-filled parameters carry their description.
			const emailTool = tools.find((tool) => tool.name === names.get('Email Invoice')?.replace(' ', '_'));
			expect(emailTool?.parameters?.properties?.Invoice_ID?.description).toMatch(/whole number/);
			// Ids are numbers in the schema (the example's `$fromAI` type), as the service's ids are.
			expect(emailTool?.parameters?.properties?.Invoice_ID?.type).toBe('number');

			// The calls the model made, by the descriptions alone: invoice of encounter 1, then e-mail it.
			const calls = model.requests.flatMap((request) =>
				(Array.isArray(request.body.input) ? request.body.input : []).filter((item) => item.type === 'function_call'),
			);
			const lastCalls = calls.slice(-2).map((call) => [call.name, JSON.parse(call.arguments ?? '{}')]);
			expect(lastCalls).toEqual([
				[names.get('Get Invoice of Encounter')?.replace(' ', '_'), expect.objectContaining({ Encounter_ID: 1 })],
				[names.get('Email Invoice')?.replace(' ', '_'), expect.objectContaining({ Invoice_ID: 1 })],
			]);
			expect(clinic.sim.log.filter((entry) => entry.path === '/api/v1/invoices/1/sign')).toEqual([]);

			// The refusal, with the service's reason, went back to the model as the tool's output.
			const outputs = model.requests.flatMap((request) =>
				(Array.isArray(request.body.input) ? request.body.input : []).filter((item) => item.type === 'function_call_output'),
			);
			const refusal = JSON.stringify(outputs[outputs.length - 1]?.output);
			expect(refusal).toContain('Invoice is not signed; sign it before e-mailing it');
			const [answer] = nodeJson(result.run!, 'AI Agent');
			expect(String(answer.output)).toContain('Invoice is not signed; sign it before e-mailing it');
			// No secret of the Clinic credential went to the model.
			expect(JSON.stringify(model.requests)).not.toContain(clinic.sim.demo.password);
		}),
		5 * 60_000,
	);
});
