/**
 * The Clinic node as tools of n8n's MCP Server Trigger (n8n 2.41), reached by the official MCP
 * TypeScript SDK client over Streamable HTTP at the trigger's production URL. The workflow is
 * the example examples/clinic-mcp-server.json, as a person builds it in the editor: default
 * node names ("Sign an invoice in Clinic"), id fields as a Clinic tool has them (filled in by
 * the model, typed number and described: the example sets none of them), and Tool
 * Description set manually. The test asserts what a model is given
 * (names, descriptions, input schemas) and what it gets back (records, the e-mail, a refusal).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { N8N_VERSIONS } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { loadExample } from './support/examples';

/** The example's MCP Server Trigger path. */
const MCP_PATH = 'clinic';
const EXAMPLE = 'clinic-mcp-server.json';

interface ListedTool {
	name: string;
	description?: string;
	inputSchema: { type: string; properties?: Record<string, { type?: string; description?: string }>; required?: string[] };
}

interface ToolAnswer {
	isError?: boolean;
	content: Array<{ type: string; text?: string }>;
}

const textOf = (answer: ToolAnswer) => answer.content.map((part) => part.text ?? '').join('\n');

describe('Clinic tools behind n8n\'s MCP Server Trigger (n8n 2.41.1)', () => {
	let client: Client;
	let tools: ListedTool[] = [];
	const clinic = useClinicN8n({
		version: N8N_VERSIONS.v2,
		label: 'mcp',
		laneServer: true,
		prepare: (sim) => void sim.seedEvents(3, 'consultation', 'consultation-finished'),
		workflows: (sim) => [loadExample(EXAMPLE, sim)],
	});
	const { n8n } = clinic;

	beforeAll(async () => {
		await clinic.server.activateWorkflow(clinic.workflowIds[0]);
		client = new Client({ name: 'clinic-e2e', version: '1.0.0' });
		await client.connect(new StreamableHTTPClientTransport(new URL(`${clinic.server.baseUrl}/mcp/${MCP_PATH}`)));
		tools = (await client.listTools()).tools as ListedTool[];
	});

	afterAll(async () => {
		await client?.close();
	});

	const call = async (name: string, args: Record<string, unknown>) =>
		(await client.callTool({ name, arguments: args })) as ToolAnswer;

	it(
		'lists each tool under its whole node name, with descriptions and described number ids',
		n8n.run(async () => {
			// README "Use from an MCP client" shows this list: MCP_PRINT_TOOLS=1 prints it.
			if (process.env.MCP_PRINT_TOOLS) console.log(JSON.stringify(tools, null, 2));
			// n8n derives the name from the node name; the default names stay under its 64-character cut.
			expect(tools.map((tool) => tool.name).sort()).toEqual([
				'Email_an_invoice_in_Clinic',
				'Get_a_consultation_in_Clinic',
				'Get_many_events_in_Clinic',
				'Get_the_invoice_of_an_encounter_in_Clinic',
				'Sign_an_invoice_in_Clinic',
			]);
			for (const tool of tools) expect(tool.name.length).toBeLessThan(64);

			const tool = (name: string) => tools.find((listed) => listed.name === name) as ListedTool;
			expect(tool('Sign_an_invoice_in_Clinic').description).toMatch(/whole number such as 42.*Cannot be undone/);
			expect(tool('Email_an_invoice_in_Clinic').description).toMatch(/unsigned invoice is refused/);
			expect(tool('Get_a_consultation_in_Clinic').description).toMatch(/whole number such as 1024/);

			// Every property says what it is; ids are numbers, as the service's ids are.
			for (const listed of tools) {
				for (const [key, property] of Object.entries(listed.inputSchema.properties ?? {})) {
					expect({ tool: listed.name, key, description: property.description }).toEqual({
						tool: listed.name,
						key,
						description: expect.stringMatching(/a whole number such as \d+/),
					});
					expect(property.type).toBe('number');
				}
			}
			expect(tool('Get_a_consultation_in_Clinic').inputSchema).toMatchObject({
				type: 'object',
				properties: { Consultation_ID: { type: 'number', description: 'The consultation ID, a whole number such as 1024' } },
				required: ['Consultation_ID'],
			});
			expect(tool('Sign_an_invoice_in_Clinic').inputSchema.properties).toEqual({
				Invoice_ID: { type: 'number', description: 'The invoice ID, a whole number such as 42' },
			});
		}),
		60_000,
	);

	it(
		'reads a consultation and its invoice with ids sent as numbers',
		n8n.run(async () => {
			const consultation = await call('Get_a_consultation_in_Clinic', { Consultation_ID: 1 });
			expect(consultation.isError).toBeFalsy();
			expect(JSON.parse(textOf(consultation))).toEqual([
				expect.objectContaining({ id: 1, encounter_id: 1, person_id: 1, finished_at: '2025-03-10T16:05:00.000Z' }),
			]);

			const invoice = await call('Get_the_invoice_of_an_encounter_in_Clinic', { Encounter_ID: 1 });
			expect(invoice.isError).toBeFalsy();
			expect(JSON.parse(textOf(invoice))).toEqual([expect.objectContaining({ id: 1, encounter_id: 1 })]);

			const events = await call('Get_many_events_in_Clinic', { Limit: 2 });
			expect(events.isError).toBeFalsy();
			expect(JSON.parse(textOf(events))).toEqual([
				expect.objectContaining({ name: 'consultation-finished' }),
				expect.objectContaining({ name: 'consultation-finished' }),
			]);
		}),
		60_000,
	);

	it(
		'an id sent as a string where the schema says number is refused in words that name the fix',
		n8n.run(async () => {
			const reads = () => clinic.sim.log.filter((entry) => entry.path === '/api/v1/consultations/1').length;
			const before = reads();
			const answer = await call('Get_a_consultation_in_Clinic', { Consultation_ID: '1' });
			expect(answer.isError).toBe(true);
			expect(textOf(answer)).toMatch(/did not match expected schema[\s\S]*Expected number, received string[\s\S]*Consultation_ID/);
			// Refused by n8n before the node ran: nothing reached the service.
			expect(reads()).toBe(before);
		}),
		60_000,
	);

	it(
		'signs an invoice and e-mails it: the answer says the e-mail went out',
		n8n.run(async () => {
			const signed = await call('Sign_an_invoice_in_Clinic', { Invoice_ID: 1 });
			expect(signed.isError).toBeFalsy();
			const [signedInvoice] = JSON.parse(textOf(signed));
			expect(signedInvoice).toMatchObject({ id: 1 });
			expect(signedInvoice.signed_at).toBeTruthy();
			expect(signedInvoice.email_sent).toBeUndefined();

			const emailed = await call('Email_an_invoice_in_Clinic', { Invoice_ID: 1 });
			expect(emailed.isError).toBeFalsy();
			expect(JSON.parse(textOf(emailed))).toEqual([expect.objectContaining({ email_sent: true, id: 1 })]);
			expect(clinic.sim.data.invoiceEmails).toEqual([expect.objectContaining({ invoice_id: 1 })]);
		}),
		60_000,
	);

	it(
		'the service\'s refusal (an unsigned invoice e-mailed) reaches the client as a tool error with its reason',
		n8n.run(async () => {
			const refused = await call('Email_an_invoice_in_Clinic', { Invoice_ID: 2 });
			expect(refused.isError).toBe(true);
			const text = textOf(refused);
			if (process.env.MCP_PRINT_TOOLS) console.log(text);
			expect(text).toContain('Invoice is not signed; sign it before e-mailing it');
			expect(text).toContain('Invoice 2');
			// Words for a model: what to do next, not where to look in n8n's editor.
			expect(text).not.toMatch(/this item/);
			expect(clinic.sim.data.invoiceEmails.filter((email) => email.invoice_id === 2)).toEqual([]);
		}),
		60_000,
	);
});
