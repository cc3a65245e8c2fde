/**
 * Patient data in n8n's execution history and logs (n8n 1.123 and 2.41): every example of
 * examples/ runs against the simulator (the manual ones from the editor's Execute Workflow in
 * an n8n logging at debug level, the two invoicing flows active, started by a finished
 * consultation), then each stored execution,
 * read back through n8n's API, and every log of the run are searched for the seed data's
 * clinical texts, names, phones, e-mails, addresses and form answers. None may be there,
 * and the invoicing flows still sign, e-mail and keep the PDF.
 *
 * A value the example itself holds (the portal sign-in types the demo phone) is what the
 * user wrote into the workflow, not data read from the service: it is left out of that
 * example's search and of the log search, and named in the test.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import type { Simulator } from '../simulator';
import { ALL_N8N_VERSIONS, N8N_VERSIONS, executeWorkflow, nodeItems, nodeJson, restImportCredentials, runManually } from './harness';
import type { N8nServer, WorkflowImport, WorkflowRun } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { startFakeModel, type FakeModel } from './support/fakeModel';
import { EXAMPLES_DIR, exampleFiles, fakeModelCredential, loadExample, simulatorCredentials } from './support/examples';
import { runsWithValue, settledRuns } from './support/runs';
import { DEMO_CREDENTIAL, chain, manualTrigger } from './support/workflows';

const WEBHOOK_FLAGSHIP = 'consultation-finished-sign-email-pdf.json';
const EVENT_LOG_FLAGSHIP = 'consultation-finished-event-log-sign-email.json';
const AI_AGENT = 'ai-agent-invoice-assistant.json';
const PORTAL_SIGN_IN = 'patient-portal-sign-in.json';
const PORTAL_PEOPLE = 'patient-portal-people.json';

const exampleText = (file: string) => readFileSync(join(EXAMPLES_DIR, file), 'utf8');

/** What the seed data holds of patients and consultations, as the search terms. */
function seedTerms(sim: Simulator): string[] {
	const terms = new Set<string>();
	const add = (value: unknown) => {
		if (typeof value === 'string' && value.trim().length >= 5) terms.add(value.trim());
	};
	for (const c of sim.data.consultations.values()) {
		for (const field of ['cause', 'medical_instructions', 'subjective_symptoms', 'treatment_plan', 'physical_examination', 'cause_extended'] as const) {
			add(c[field]);
		}
	}
	for (const p of sim.data.people.values()) {
		add(`${p.first_name} ${p.last_name}`);
		for (const field of ['first_name', 'last_name', 'email', 'telephone', 'telephone2', 'identity_number', 'address_street', 'notes'] as const) {
			add(p[field]);
		}
	}
	for (const response of sim.data.customFormResponses) {
		for (const answer of response.answers as Array<{ answer: string }>) add(answer.answer);
	}
	return [...terms];
}

/**
 * The control: a Get Consultation saved at node version 1 (whole record), as every workflow
 * from before the Output choice. Its run must hold the clinical text, or the search proves nothing.
 */
const CONTROL_LOG = 'control-version-1';
function controlWorkflow(): WorkflowImport {
	return chain(
		'Control: Get Consultation saved at version 1',
		[
			manualTrigger(),
			// No authentication parameter (its default: the password credential), as the control always had it.
			{
				name: 'Get Consultation',
				type: 'n8n-nodes-clinic.clinic',
				typeVersion: 1,
				parameters: { resource: 'consultation', operation: 'get', consultationId: '1' },
				credentials: { clinicApi: DEMO_CREDENTIAL },
			},
		],
		{ id: 'clinicCtrlVersn1' },
	);
}

/** The terms found in `text`, with JSON's escapes undone. */
function found(text: string, terms: string[]): string[] {
	return terms.filter((term) => text.includes(term) || text.includes(JSON.stringify(term).slice(1, -1)));
}

describe.each(ALL_N8N_VERSIONS)('patient data in n8n %s', (version) => {
	let sim: Simulator;
	let model: FakeModel | undefined;
	let server: N8nServer;
	let terms: string[] = [];
	const ids = new Map<string, string>();
	let controlId = '';
	const manualRuns = new Map<string, WorkflowRun>();
	const withAgent = version === N8N_VERSIONS.v2;
	// The MCP server runs only when a client calls a tool (e2e/mcp.test.ts): nothing starts it here.
	const files = exampleFiles().filter((file) => (withAgent || file !== AI_AGENT) && !exampleText(file).includes('"@n8n/n8n-nodes-langchain.mcpTrigger"'));

	const clinic = useClinicN8n({
		version,
		label: 'patient-data',
		simulator: { allowHttpCallbacks: true, deliveryRetryDelayMs: 100 },
		prepare: async (sim) => {
			terms = seedTerms(sim);
			if (withAgent) model = await startFakeModel();
		},
		credentials: (sim) => [...simulatorCredentials(sim), ...(model ? [fakeModelCredential(model.baseUrl)] : [])],
		workflows: (sim) => [...files.map((file) => loadExample(file, sim)), controlWorkflow()],
		// The server logs at debug level: the most n8n writes about a run.
		env: { N8N_LOG_LEVEL: 'debug' },
	});
	const { n8n } = clinic;
	beforeAll(() => {
		sim = clinic.sim;
		server = clinic.server;
		files.forEach((file, index) => ids.set(file, clinic.workflowIds[index]));
		controlId = clinic.workflowIds[files.length];
	});

	afterAll(async () => {
		await model?.close();
	});

	it('the search terms are the seed data\'s', () => {
		expect(terms).toEqual(
			expect.arrayContaining([
				'Control de hipertensión arterial',
				'Losartán 50 mg cada 24 horas. Dieta baja en sodio. Control en 30 días.',
				'María Fernanda González López',
				'5512345678',
				'maria.gonzalez@example.mx',
				'Penicilina',
			]),
		);
	});

	it(
		'every example started by hand runs, its output free of patient data',
		n8n.run(async (ctx) => {
			const manual = files.filter((file) => !/"n8n-nodes-clinic\.clinic(EventLog)?Trigger"/.test(exampleText(file)));
			expect(manual.length).toBeGreaterThan(5);
			for (const file of manual.filter((f) => f !== PORTAL_PEOPLE)) {
				const result = await runManually(server, ids.get(file)!);
				manualRuns.set(file, result.run!);
			}
			// The portal's people with the token the sign-in example obtained, in its own credential.
			const [verified] = nodeJson(manualRuns.get(PORTAL_SIGN_IN)!, 'Verify Code');
			await restImportCredentials(server, simulatorCredentials(sim, String(verified.token)));
			const people = await runManually(server, ids.get(PORTAL_PEOPLE)!);
			manualRuns.set(PORTAL_PEOPLE, people.run!);
			expect(nodeJson(people.run!, 'Portal People').map((p) => p.id)).toContain(4);

			for (const [file, run] of manualRuns) {
				const own = found(exampleText(file), terms);
				expect({ file, found: found(JSON.stringify(run), terms.filter((t) => !own.includes(t))) }).toEqual({ file, found: [] });
			}
			// The control (version 1, whole record) holds the clinical text: the search finds it when it
			// is there. It runs with `n8n execute`, which prints the run: its log holds the text too.
			// At n8n's usual log level: debug lines after the printed run would hide where it ends.
			const control = await executeWorkflow(ctx, controlId, { logName: CONTROL_LOG, env: { N8N_LOG_LEVEL: undefined } });
			expect(found(JSON.stringify(control.run), terms)).toEqual(
				expect.arrayContaining(['Control de hipertensión arterial', 'Cefalea ocasional']),
			);
			// The patient update reached the service, the custom form responses were read.
			expect(sim.data.people.get(1)!.email).toBe('ana.medina@example.com');
			expect(nodeJson(manualRuns.get('patient-update.json')!, 'Custom Form Responses').map((r) => r.id)).toEqual([71, 72]);
		}),
		10 * 60_000,
	);

	it(
		'the invoicing flows, active: sign, e-mail and keep the PDF, their stored executions free of clinical text',
		n8n.run(async (ctx) => {
			const webhookId = ids.get(WEBHOOK_FLAGSHIP)!;
			await server.activateWorkflow(webhookId);
			if (ctx.asyncPublication) await server.waitForPublication(webhookId);
			const finished = await sim.emit('consultation', 'consultation-finished', { id: 1, encounter_id: 1 });
			const { runs } = await settledRuns(sim, server, webhookId, finished.id, runsWithValue('Consultation Finished', finished.value));
			expect(runs).toHaveLength(1);
			const [byWebhook] = runs;
			expect(byWebhook.status).toBe('success');
			expect(nodeJson(byWebhook, 'Sign Invoice')[0]).toMatchObject({ id: 1, signed_at: expect.any(String) });
			expect(nodeJson(byWebhook, 'Email Invoice')[0]).toMatchObject({ id: 1 });
			expect(nodeItems(byWebhook, 'Download PDF')[0].binary?.invoicePdf).toMatchObject({ mimeType: 'application/pdf', fileName: '1.pdf' });
			await server.deactivateWorkflow(webhookId);

			const pollingId = ids.get(EVENT_LOG_FLAGSHIP)!;
			await server.activateWorkflow(pollingId);
			if (ctx.asyncPublication) await server.waitForPublication(pollingId);
			await sim.emit('consultation', 'consultation-finished', { id: 2, encounter_id: 2 });
			const [byPoll] = await server.waitForExecutions(pollingId, 1, { timeoutMs: 150_000 });
			expect(byPoll.status).toBe('success');
			expect(nodeJson(byPoll, 'Sign Invoice')[0]).toMatchObject({ id: 2, signed_at: expect.any(String) });
			expect(nodeJson(byPoll, 'Email Invoice')[0]).toMatchObject({ id: 2 });
			await server.deactivateWorkflow(pollingId);

			expect(sim.data.invoiceEmails.map((email) => email.invoice_id)).toEqual(expect.arrayContaining([1, 2]));
			for (const [file, execution] of [
				[WEBHOOK_FLAGSHIP, byWebhook],
				[EVENT_LOG_FLAGSHIP, byPoll],
			] as const) {
				const own = found(exampleText(file), terms);
				expect({ file, found: found(JSON.stringify(execution), terms.filter((t) => !own.includes(t))) }).toEqual({ file, found: [] });
			}
		}),
		10 * 60_000,
	);

	it(
		'every execution n8n stored, read back through its API, holds no patient data',
		n8n.run(async () => {
			let stored = 0;
			for (const file of files) {
				const executions = await server.listExecutions(ids.get(file)!, { includeData: true });
				expect({ file, stored: executions.length > 0 }).toEqual({ file, stored: true });
				stored += executions.length;
				const own = found(exampleText(file), terms);
				for (const execution of executions) {
					expect({ file, found: found(JSON.stringify(execution), terms.filter((t) => !own.includes(t))) }).toEqual({ file, found: [] });
				}
			}
			expect(stored).toBeGreaterThanOrEqual(files.length);
			// The control's stored execution, read the same way, holds the clinical text.
			const [control] = await server.listExecutions(controlId, { includeData: true });
			expect(found(JSON.stringify(control), terms)).toContain('Control de hipertensión arterial');
		}),
		5 * 60_000,
	);

	it(
		"n8n's logs of the whole run (the server at debug level, the imports) hold no patient data",
		n8n.run(async (ctx) => {
			await server.stop();
			const allExamples = files.map(exampleText).join('\n');
			const own = found(allExamples, terms);
			// The portal sign-in types the demo phone into its own parameters; nothing else.
			expect(own).toEqual(['5512345678']);
			const logs = readdirSync(ctx.logDir).filter((name) => name.endsWith('.log'));
			expect(logs.filter((name) => name.includes('start'))).toHaveLength(1);
			const searched = terms.filter((t) => !own.includes(t));
			const controlLog = logs.find((name) => name.includes(CONTROL_LOG))!;
			expect(found(readFileSync(join(ctx.logDir, controlLog), 'utf8'), searched)).toContain('Control de hipertensión arterial');
			for (const name of logs.filter((log) => log !== controlLog)) {
				const text = readFileSync(join(ctx.logDir, name), 'utf8');
				expect({ log: name, found: found(text, searched) }).toEqual({ log: name, found: [] });
			}
		}),
		60_000,
	);
});
