/**
 * The Clinic Trigger inside a running n8n: activation subscribes on the simulator's
 * webhook service, signed deliveries start executions (once, even when the service
 * repeats them), bad signatures start nothing, a restart duplicates nothing, and
 * deactivation unsubscribes. The flagship example runs end to end: a consultation
 * finishes, its invoice is signed, e-mailed and its PDF kept.
 */
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { passwordCredentialData, signDelivery, type Simulator } from '../simulator';
import { startRefusingProxy } from '../ClinicTrigger/support';
import { N8N_VERSIONS, importedCredentialId, nodeItems, nodeJson, startN8n, type N8nServer, type PublicationService, type WorkflowImport } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { DEMO_CREDENTIAL_IDS, loadExample, simulatorCredentials } from './support/examples';
import { acceptedAsNew, runsWithValue, settledRuns, storedRuns } from './support/runs';
import { clinicTriggerWorkflow } from './support/workflows';

const FLAGSHIP = 'consultation-finished-sign-email-pdf.json';

function patientEventsWorkflow(): WorkflowImport {
	return clinicTriggerWorkflow({
		name: 'Patient events',
		webhookId: '0b8f7c0e-3f0a-4c55-9a7e-6a3c2d1e9f11',
		nodeId: 'patient-events',
		nodeName: 'Patient Events',
		events: ['patient:patient-updated', 'patient:patient-created'],
	});
}

const setups: Array<[string, string, PublicationService]> = [
	['1.123', N8N_VERSIONS.v1, 'default'],
	['2.41 (publication service)', N8N_VERSIONS.v2, 'default'],
	['2.41 (publication service off)', N8N_VERSIONS.v2, 'off'],
];

const REFUSING_CREDENTIAL = { id: 'clinicRefusing01', name: 'Clinic API (refusing)' };

/** The patient-events trigger on a credential whose webhook service refuses every subscription. */
function refusedWorkflow(): WorkflowImport {
	return clinicTriggerWorkflow({
		name: 'Patient events (subscription refused)',
		webhookId: '5d1b8f2a-7c3e-4f60-8a9b-2e4d6c8f0a13',
		nodeId: 'refused-events',
		nodeName: 'Patient Events',
		events: ['patient:patient-created'],
		credential: REFUSING_CREDENTIAL,
	});
}

describe.each(setups)('Clinic Trigger in n8n %s', (_label, version, publicationService) => {
	let sim: Simulator;
	let server: N8nServer;
	let flagshipId: string;
	let patientsId: string;
	let refusedId: string;
	let proxy: Awaited<ReturnType<typeof startRefusingProxy>>;

	const clinic = useClinicN8n({
		version,
		label: 'trigger',
		publicationService,
		simulator: { allowHttpCallbacks: true, deliveryRetryDelayMs: 100 },
		prepare: async (started) => {
			proxy = await startRefusingProxy(started.webhooksBaseUrl);
			proxy.refuse({ method: 'POST', path: '/webhooks', status: 503, body: { error: 'subscription store unavailable' } });
		},
		credentials: (started) => [
			...simulatorCredentials(started),
			{ ...REFUSING_CREDENTIAL, type: 'clinicApi', data: passwordCredentialData(started, { webhookBaseUrl: proxy.url }) },
		],
		workflows: (started) => [loadExample(FLAGSHIP, started), patientEventsWorkflow(), refusedWorkflow()],
	});
	const { n8n } = clinic;
	beforeAll(() => {
		sim = clinic.sim;
		server = clinic.server;
		[flagshipId, patientsId, refusedId] = clinic.workflowIds;
	});

	afterAll(async () => {
		await proxy?.close();
	});

	const live = () => sim.subscriptions().filter((s) => s.deleted_at === null && s.status === 'enabled');
	const executionsOf = async (id: string) => await server.listExecutions(id);
	/** Each test activates what it needs: it may run alone or after any other. */
	const ensureActive = async (...ids: string[]) => {
		for (const id of ids) if (!(await server.getWorkflow(id)).active) await server.activateWorkflow(id);
	};
	/** The patient-events runs of one emitted event, once its deliveries are over (see support/runs.ts). */
	const patientRuns = async (event: { id: number; value: unknown }) =>
		(await settledRuns(sim, server, patientsId, event.id, runsWithValue('Patient Events', event.value))).runs;

	it(
		'activation subscribes each selected event once, at its own address, with its own secret',
		n8n.run(async (ctx) => {
			await ensureActive(flagshipId, patientsId);
			const subscriptions = live();
			expect(subscriptions.map((s) => s.event_name).sort()).toEqual([
				'consultation-finished',
				'patient-created',
				'patient-updated',
			]);
			for (const s of subscriptions) {
				expect(s.url.startsWith(`${ctx.baseUrl}/webhook/`)).toBe(true);
				expect(new URL(s.url).searchParams.get('event')).toMatch(/^(consultation|patient):/);
			}
			expect(new Set(subscriptions.map((s) => s.authentication_data.secret)).size).toBe(3);
		}),
		5 * 60_000,
	);

	it(
		'a refused subscription: the activation error names the event and what the service answered',
		n8n.run(async () => {
			const failure = await server.activateWorkflow(refusedId, { timeoutMs: 120_000 }).then(
				() => undefined,
				(error: Error) => error.message,
			);
			expect(failure).toBeDefined();
			expect(failure).toMatch(/Could not subscribe to \\?"Patient Created/);
			expect(failure).toMatch(/subscription store unavailable|503/);
			expect(live().filter((s) => new URL(s.url).pathname.includes('5d1b8f2a'))).toEqual([]);
		}),
		5 * 60_000,
	);

	it(
		'a finished consultation gets its invoice signed, e-mailed and its PDF kept',
		n8n.run(async () => {
			await ensureActive(flagshipId);
			const consultation = sim.data.consultations.get(1)!;
			const record = await sim.emit('consultation', 'consultation-finished', { id: consultation.id, encounter_id: consultation.encounter_id });
			expect(record.logs.map((log) => log.response_code)).toEqual([200]);
			// n8n's own answer (2.x sends it once the execution is stored): an empty 200.
			expect(record.logs[0].response ?? '').toBe('');
			const { runs } = await settledRuns(sim, server, flagshipId, record.id, runsWithValue('Consultation Finished', record.value));
			expect(runs).toHaveLength(1);
			const [execution] = runs;
			expect(execution.status).toBe('success');
			expect(nodeJson(execution, 'Consultation Finished')[0]).toMatchObject({
				event: 'consultation-finished',
				topic: `${sim.topicPrefix}.consultation`,
				value: { id: 1 },
			});
			expect(nodeJson(execution, 'Sign Invoice')[0]).toMatchObject({ id: 1, signed_at: expect.any(String) });
			const [pdf] = nodeItems(execution, 'Download PDF');
			expect(pdf.binary?.invoicePdf).toMatchObject({ mimeType: 'application/pdf', fileName: '1.pdf' });
			expect(sim.data.invoices.get(1)!.signed_at).not.toBeNull();
			// No subscription secret in any node's output (n8n 1.x also stores the workflow with
			// its static data beside the run: that copy is n8n's, not output).
			const stored = JSON.stringify(execution.data?.resultData);
			for (const s of sim.subscriptions()) expect(stored).not.toContain(s.authentication_data.secret);
		}),
		5 * 60_000,
	);

	it(
		'repeated deliveries start one execution, whether the copies arrive together or one after the other',
		n8n.run(async () => {
			await ensureActive(patientsId);
			sim.setDuplicateDeliveries('concurrent');
			const together = await sim.emit('patient', 'patient-updated', { id: 2, first_name: 'Luis' });
			sim.setDuplicateDeliveries('sequential');
			const oneAfterOther = await sim.emit('patient', 'patient-created', { id: 9, first_name: 'Rosa' });
			sim.setDuplicateDeliveries('off');
			// Two copies of each went out and were answered 2xx.
			expect(together.logs.map((log) => log.response_code)).toEqual([200, 200]);
			expect(oneAfterOther.logs.map((log) => log.response_code)).toEqual([200, 200]);
			const [updated, created] = [await patientRuns(together), await patientRuns(oneAfterOther)];
			expect(updated.map((e) => nodeJson(e, 'Patient Events')[0].event)).toEqual(['patient-updated']);
			expect(created.map((e) => nodeJson(e, 'Patient Events')[0].event)).toEqual(['patient-created']);
		}),
		5 * 60_000,
	);

	it(
		'two distinct events with identical bodies start two runs; a repeated delivery of one starts none',
		n8n.run(async () => {
			await ensureActive(patientsId);
			const same = { id: 7, first_name: 'Eva' };
			const first = await sim.emit('patient', 'patient-updated', same);
			sim.setDuplicateDeliveries('sequential');
			const second = await sim.emit('patient', 'patient-updated', same);
			sim.setDuplicateDeliveries('off');
			// Both events' runs carry the same value: wait for as many as n8n accepted of both.
			const isEither = runsWithValue('Patient Events', same);
			const accepted = (await settledRuns(sim, server, patientsId, first.id, isEither)).accepted;
			const acceptedToo = (await settledRuns(sim, server, patientsId, second.id, isEither)).accepted;
			const runs = await storedRuns(server, patientsId, isEither, accepted + acceptedToo);
			expect(runs.map((e) => nodeJson(e, 'Patient Events')[0].eventId).sort()).toEqual([first.id, second.id].sort());
		}),
		5 * 60_000,
	);

	it(
		'a delivery with a bad signature or for another event is refused and starts nothing',
		n8n.run(async () => {
			await ensureActive(patientsId);
			const subscription = live().find((s) => s.event_name === 'patient-updated')!;
			const body = JSON.stringify({ value: { id: 3 } });
			const forged = await fetch(subscription.url, {
				method: 'POST',
				headers: { 'content-type': 'application/json', signature: 'f'.repeat(64) },
				body,
			});
			expect(forged.status).toBe(401);
			const unsigned = await fetch(subscription.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
			expect(unsigned.status).toBe(401);
			const otherEvent = new URL(subscription.url);
			otherEvent.searchParams.set('event', 'invoice:invoice-created');
			const wrongEvent = await fetch(otherEvent, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
			expect(wrongEvent.status).toBe(404);
			// A real event after the refused ones: once its one run is stored, a run the refused
			// ones had started would be there too.
			const after = await sim.emit('patient', 'patient-updated', { id: 3, first_name: 'after the forged ones' });
			expect(await patientRuns(after)).toHaveLength(1);
			const forgedRuns = (await executionsOf(patientsId)).filter(runsWithValue('Patient Events', { id: 3 }));
			expect(forgedRuns).toEqual([]);
		}),
		5 * 60_000,
	);

	// One restart for both: a start costs the machine more than the checks.
	it(
		"after an n8n restart nothing is subscribed twice; events delivered while it was stopped run once, oldest first, with the first delivery after its start; re-sent deliveries answered 200 before it do not run again; the flagship signs, e-mails and keeps the PDF of each invoice once",
		n8n.run(async (ctx) => {
			await ensureActive(flagshipId, patientsId);
			const events = [];
			for (let i = 0; i < 5; i++) events.push(await sim.emit('patient', 'patient-updated', { id: 50 + i, first_name: 'Before the restart' }));
			for (const event of events) expect(await patientRuns(event)).toHaveLength(1);
			const before = live().map((s) => s.id).sort();
			await server.stop();
			const missed = [];
			for (let i = 0; i < 5; i++) missed.push(await sim.emit('patient', 'patient-updated', { id: 60 + i, first_name: 'While n8n was down' }));
			const finished = [await sim.finishConsultation(), await sim.finishConsultation()];
			for (const event of [...missed, ...finished]) expect(event.logs.every((log) => log.response_code === null)).toBe(true);
			server = n8n.track(await startN8n(ctx));
			if (ctx.asyncPublication) for (const id of [patientsId, flagshipId]) await server.waitForPublication(id);
			expect(live().map((s) => s.event_name).sort()).toEqual([
				'consultation-finished',
				'patient-created',
				'patient-updated',
			]);
			// Same subscriptions, or replacements: never more than one per event.
			expect(live()).toHaveLength(before.length);

			const first = await sim.emit('patient', 'patient-updated', { id: 65, first_name: 'First after the start' });
			const [run] = await patientRuns(first);
			expect(nodeJson(run, 'Patient Events').map((json) => json.eventId)).toEqual([...missed, first].map((event) => event.id));
			for (const event of missed) expect((await patientRuns(event)).map((execution) => execution.id)).toEqual([run.id]);

			// The service sends the deliveries from before the restart again, byte for byte, signed as before.
			const subscription = live().find((s) => s.event_name === 'patient-updated')!;
			const again = [];
			for (const event of events) {
				const body = event.logs[0].request;
				const signature = signDelivery(subscription.authentication_data.secret, Buffer.from(body));
				const answer = await fetch(subscription.url, { method: 'POST', headers: { 'content-type': 'application/json', signature }, body });
				again.push({ status: answer.status, text: await answer.text() });
			}
			expect(again.map((answer) => answer.status)).toEqual(events.map(() => 200));
			expect(acceptedAsNew(again)).toBe(0);
			for (const event of events) expect(await patientRuns(event)).toHaveLength(1);

			// The flagship: three finished consultations in one execution, each invoice once, each item paired with its event.
			finished.push(await sim.finishConsultation());
			const { runs } = await settledRuns(sim, server, flagshipId, finished[2].id, runsWithValue('Consultation Finished', finished[2].value));
			expect(runs).toHaveLength(1);
			const [flagship] = runs;
			expect(flagship.status).toBe('success');
			expect(nodeJson(flagship, 'Consultation Finished').map((json) => json.eventId)).toEqual(finished.map((event) => event.id));
			const invoiceIds = finished.map((event) => sim.data.encounters.get((event.value as { encounter_id: number }).encounter_id)!.invoice_id as number);
			expect(nodeJson(flagship, 'Sign Invoice').map((json) => json.id)).toEqual(invoiceIds);
			const pdfs = nodeItems(flagship, 'Download PDF');
			expect(pdfs.map((item) => item.binary?.invoicePdf?.fileName)).toEqual(invoiceIds.map((id) => `${id}.pdf`));
			expect(pdfs.map((item) => item.pairedItem)).toEqual(invoiceIds.map((_, item) => ({ item })));
			for (const id of invoiceIds) {
				expect(sim.data.invoices.get(id)!.signed_at).not.toBeNull();
				expect(sim.data.invoiceEmails.filter((email) => email.invoice_id === id)).toHaveLength(1);
			}
		}),
		5 * 60_000,
	);

	it(
		"the credential's Test button signs in for real and says what is wrong",
		n8n.run(async (ctx) => {
			const test = async (data: Record<string, unknown>) =>
				await server.rest<{ status: string; message: string }>('POST', '/credentials/test', {
					credentials: { id: importedCredentialId(ctx, DEMO_CREDENTIAL_IDS.clinicApi), name: 'Clinic API (simulator)', type: 'clinicApi', data },
				});
			const [good] = simulatorCredentials(sim);
			sim.clearLog();
			expect(await test(good.data)).toMatchObject({ status: 'OK' });
			// An authenticated read on the webhook service (its address is set) with this
			// account's token (the one n8n already holds for the same URL, username and password;
			// any change to them signs in anew, as below).
			expect(sim.log.map((e) => [e.method, e.host, e.path, e.status, e.tokenPlacement])).toContainEqual([
				'GET',
				'webhooks',
				'/webhooks',
				200,
				['header'],
			]);

			const wrong = await test({ ...good.data, password: 'not-the-password' });
			expect(wrong.status).toBe('Error');
			expect(wrong.message).toMatch(/refused the username or password/);
			expect(wrong.message).not.toContain('not-the-password');

			const twoFactor = await test({ ...good.data, username: sim.twoFactor.username, password: sim.twoFactor.password });
			expect(twoFactor.message).toMatch(/two-factor/);
		}),
		5 * 60_000,
	);

	it(
		'deactivation removes every subscription',
		n8n.run(async () => {
			await ensureActive(flagshipId, patientsId);
			expect(live()).not.toEqual([]);
			await server.deactivateWorkflow(patientsId);
			await server.deactivateWorkflow(flagshipId);
			expect(live()).toEqual([]);
		}),
		5 * 60_000,
	);

	// Last: it stops n8n, and a start costs the machine more than the check itself. What n8n
	// stores does not depend on how it activates, so once a version (not with 2.41's
	// publication service off).
	if (publicationService === 'default') {
		it(
			"n8n's database, executions included, holds no subscription secret, token, password or signing key",
			n8n.run(async (ctx) => {
				// A run of its own, so that the database holds an execution to search.
				await ensureActive(patientsId);
				const event = await sim.emit('patient', 'patient-updated', { id: 1, first_name: 'stored run' });
				expect(await patientRuns(event)).toHaveLength(1);
				// Stop n8n so that SQLite has written everything into the database file.
				await server.stop();
				const exported = join(ctx.rootDir, 'credentials-export.json');
				await ctx.runN8n(['export:credentials', '--all', '--decrypted', `--output=${exported}`], { logName: 'export' });
				const credentials = JSON.parse(readFileSync(exported, 'utf8')) as Array<{ data: Record<string, unknown> }>;
				rmSync(exported);
				const signingKey = String(credentials[0].data.webhookSigningKey);
				expect(signingKey).toMatch(/^[0-9a-f]{64}$/);

				const database = readdirSync(join(ctx.userFolder, '.n8n'))
					.filter((file) => file.startsWith('database.sqlite'))
					.map((file) => readFileSync(join(ctx.userFolder, '.n8n', file)).toString('latin1'))
					.join('\n');
				// The check can see static data: the subscriptions' key ids are in there.
				expect(database).toContain('"keyId"');
				const secrets = [
					...sim.subscriptions().map((s) => s.authentication_data.secret),
					...sim.issuedTokens(),
					sim.demo.password,
					signingKey,
				];
				expect(secrets.filter((secret) => database.includes(secret))).toEqual([]);
			}),
			5 * 60_000,
		);
	}
});
