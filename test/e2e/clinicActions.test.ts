/**
 * The Clinic node inside real n8n (1.123 and 2.41), installed from the packed tarball the
 * way the Community Nodes screen installs it, credentials saved through n8n's REST API, and
 * every example workflow of examples/ run from the editor's Execute Workflow in one running
 * n8n against the simulator (and once with `n8n execute`, a new process, to show the session
 * n8n saved is used).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { RequestLogEntry } from '../simulator';
import { ALL_N8N_VERSIONS, executeWorkflow, nodeItems, nodeJson, restImportCredentials, runManually } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { EXAMPLES_DIR, exampleFiles, loadExample, simulatorCredentials } from './support/examples';

/** Examples started by hand: not those that start from a Clinic trigger (their own tests run them active). */
const MANUAL_EXAMPLES = exampleFiles().filter(
	(file) => !readFileSync(join(EXAMPLES_DIR, file), 'utf8').match(/"n8n-nodes-clinic\.clinic(EventLog)?Trigger"/),
);

describe.each(ALL_N8N_VERSIONS)('Clinic node in n8n %s', (version) => {
	const clinic = useClinicN8n({
		version,
		label: 'actions',
		laneServer: true,
		simulator: { allowHttpCallbacks: true },
		workflows: (sim) => MANUAL_EXAMPLES.map((file) => loadExample(file, sim)),
	});
	const { n8n } = clinic;
	const idOf = (file: string) => clinic.workflowIds[MANUAL_EXAMPLES.indexOf(file)];

	const run = async (file: string, how: 'editor' | 'cli' = 'editor') => {
		clinic.sim.clearLog();
		const result = how === 'cli' ? await executeWorkflow(n8n.ctx, idOf(file)) : await runManually(clinic.server, idOf(file));
		// Nothing n8n printed holds the account password.
		expect(result.stdout).not.toContain(clinic.sim.demo.password);
		expect(clinic.server.log()).not.toContain(clinic.sim.demo.password);
		return result.run!;
	};
	const calls = (method: string, path: string): RequestLogEntry[] =>
		clinic.sim.log.filter((entry) => entry.method === method && entry.path === path);

	it(
		'patient update sends only the fields set, with insurance dates as dates; one sign-in for the run',
		n8n.run(async () => {
			// The credential as the user saved it, without a session from an earlier run.
			await restImportCredentials(clinic.server, simulatorCredentials(clinic.sim));
			const result = await run('patient-update.json');
			expect(nodeJson(result, 'Update Patient')[0]).toMatchObject({ id: 1, email: 'ana.medina@example.com' });
			const [put] = calls('PUT', '/api/v1/people/1');
			expect(put.tokenPlacement).toEqual(['header']);
			expect(put.body).toEqual({
				person: {
					email: 'ana.medina@example.com',
					telephone2: '5598765432',
					person_attributes: {
						send_reminders: true,
						insurance_name: 'Seguros Monterrey',
						insurance_number: 'POL-2291',
						insurance_claim_sinister_date: '2025-03-01',
					},
				},
			});
			expect(calls('GET', '/api/v1/people/1/custom_form_response')).toHaveLength(1);
			expect(clinic.sim.tokenRequests()).toBe(1);
		}),
		5 * 60_000,
	);

	it(
		'n8n saved the token: the next execution (a new process) signs in no more',
		n8n.run(async () => {
			// A run that leaves a saved session (signing in if none was saved yet).
			await run('billing-report.json');
			const result = await run('consultation-prescription-charge.json', 'cli');
			expect(clinic.sim.tokenRequests()).toBe(0);
			expect(nodeJson(result, 'Add Prescription Drug')[0]).toMatchObject({ consultation_id: 2, dose: '500 mg' });
			expect(nodeJson(result, 'Add Charge')[0]).toMatchObject({ invoice_id: 2 });
			expect(calls('POST', '/api/v1/consultation_invoice_items')[0].body).toMatchObject({
				consultation_invoice_item: { invoice_id: '2', quantity: '1', value: '650', accounting_type: 'service' },
			});
		}),
		5 * 60_000,
	);

	it(
		'CFDI downloads give binary files and the fiscal UUID; the token travels in the query only',
		n8n.run(async () => {
			const result = await run('invoice-cfdi-files.json');
			const [xml] = nodeItems(result, 'Download XML');
			expect(xml.json).toMatchObject({ invoiceId: 3, uuid: clinic.sim.data.invoices.get(3)!.cfdi_uuid });
			expect(xml.binary?.cfdiXml).toMatchObject({ fileName: '3.xml', mimeType: 'application/xml' });
			const [pdf] = nodeItems(result, 'Download PDF');
			expect(pdf.binary?.cfdiPdf).toMatchObject({ fileName: '3.pdf', mimeType: 'application/pdf' });
			const downloads = clinic.sim.log.filter((entry) => entry.path.includes('/download_cfdi.'));
			expect(downloads.map((entry) => [entry.status, entry.tokenPlacement])).toEqual([
				[200, ['query']],
				[200, ['query']],
			]);
			expect(JSON.stringify(result)).not.toContain('download_cfdi');
		}),
		5 * 60_000,
	);

	it(
		'the billing report gives one item per encounter',
		n8n.run(async () => {
			const result = await run('billing-report.json');
			const encounters = nodeJson(result, 'Billing Report');
			expect(encounters.length).toBeGreaterThan(0);
			expect(encounters[0]).toEqual(expect.objectContaining({ invoice_id: expect.any(Number), total_cents: expect.any(Number) }));
			expect(calls('GET', '/api/v1/reports/consultation_invoice_items')[0].query).toMatchObject({
				start: '2025-01-01',
				end: '2025-12-31',
			});
		}),
		5 * 60_000,
	);

	it(
		'public lookups need no credential; invoice item locations do',
		n8n.run(async () => {
			const result = await run('catalogs-and-public-lookups.json');
			expect(nodeJson(result, 'Waiting Rooms')).toHaveLength(2);
			expect(nodeJson(result, 'State')[0]).toMatchObject({ id: 9 });
			expect(nodeJson(result, 'Invoice Item Locations').length).toBeGreaterThan(0);
			expect(calls('GET', '/api/v1/waiting_rooms')[0].tokenKind).toBe('none');
			expect(calls('GET', '/api/v1/states/9')[0].tokenKind).toBe('none');
			expect(calls('GET', '/api/v1/invoice_item_locations').every((e) => e.tokenPlacement.includes('header'))).toBe(true);
		}),
		5 * 60_000,
	);

	it(
		'webhook subscriptions: subscribe, list, event log, unsubscribe, the token in the body where the service wants it',
		n8n.run(async () => {
			const result = await run('webhooks-and-event-log.json');
			const [subscribed] = nodeJson(result, 'Subscribe');
			expect(subscribed).toMatchObject({ event_name: 'patient-updated', event_topic: `${clinic.sim.topicPrefix}.patient` });
			expect(nodeJson(result, 'List Subscriptions').map((s) => s.id)).toContain(subscribed.id);
			expect(nodeJson(result, 'Unsubscribe')[0]).toMatchObject({ deleted: true });
			expect(clinic.sim.subscriptions().filter((s) => s.deleted_at === null)).toEqual([]);
			expect(calls('POST', '/webhooks')[0].tokenPlacement).toEqual(['body']);
			expect(calls('GET', '/webhooks')[0].tokenPlacement).toEqual(['header']);
			expect(calls('DELETE', `/webhooks/${subscribed.id}`)[0].tokenPlacement).toEqual(['body']);
			expect(calls('GET', '/events')[0].tokenPlacement).toEqual(['header']);
		}),
		5 * 60_000,
	);

	it(
		'patient portal: verify the code, then use the portal token in its own credential',
		n8n.run(async () => {
			const signIn = await run('patient-portal-sign-in.json');
			const [verified] = nodeJson(signIn, 'Verify Code');
			expect(verified.token).toEqual(expect.any(String));
			expect(JSON.stringify(nodeJson(signIn, 'Verify Code'))).not.toContain(clinic.sim.portalDemo.code);
			// The same workflow uses the token right away (Portal Token From: Earlier Step); it goes no further.
			expect(nodeJson(signIn, 'Get People').map((p) => p.id)).toContain(4);
			expect(JSON.stringify(nodeJson(signIn, 'Get People'))).not.toContain(String(verified.token));

			await restImportCredentials(clinic.server, simulatorCredentials(clinic.sim, String(verified.token)));
			const people = await run('patient-portal-people.json');
			// Person 4 has the demo phone (person 1 had it too, until the patient-update example changed it).
			expect(nodeJson(people, 'Portal People').map((p) => p.id)).toContain(4);
			expect(calls('GET', '/api/v1/patient_portal/people')[0]).toMatchObject({ tokenKind: 'portal', tokenPlacement: ['header'] });
		}),
		5 * 60_000,
	);
});
