/**
 * Output schemas: n8n's editor (schema view, mapping before a run) and its AI workflow builder
 * read `<node folder>/__schema__/v<version>/<resource>/<operation>.json` (n8n-core's
 * output-schema-resolver, 1.123 and 2.41). Each is made from what the operation outputs
 * against the simulator at the node's default version and output, so it cannot drift: this
 * test runs every operation and compares. `npm run schemas` rewrites the files.
 */
import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import type { INodeParameters } from 'n8n-workflow';

import { Clinic } from '../../nodes/Clinic/Clinic.node';
import { CredentialStore, runPoll } from '../helpers';
import { deliverWebhook } from '../helpers/trigger';
import { integrationCredentials, jsonOf, useSimulator } from '../Clinic/support';
import { ClinicTrigger } from '../../nodes/ClinicTrigger/ClinicTrigger.node';
import { PATIENT_CREATED, credentialsFor } from '../ClinicTrigger/support';

const t = useSimulator();
const description = new Clinic().description;
const VERSION = description.defaultVersion as number;
const NODES_DIR = join(__dirname, '..', '..', 'nodes');
/** n8n pads the version: 1.1 -> v1.1.0. */
const versionDir = (version: number) => `v${String(version).split('.').concat('0', '0').slice(0, 3).join('.')}`;
const VERSION_DIR = versionDir(VERSION);
/** The triggers' own version (the action node's may be newer). */
const TRIGGER_VERSION = new ClinicTrigger().description.defaultVersion as number;
const SCHEMA_DIR = join(NODES_DIR, 'Clinic', '__schema__', VERSION_DIR);
const UPDATE = process.env.UPDATE_SCHEMAS === '1';

type Schema = { type: string; properties?: Record<string, Schema>; items?: Schema };

/** A JSON schema of the shape of these values (objects merge their properties). */
function schemaOf(values: unknown[]): Schema {
	const present = values.filter((value) => value !== null && value !== undefined);
	if (present.length === 0) return { type: 'null' };
	const first = present[0];
	if (Array.isArray(first)) return { type: 'array', items: schemaOf(present.flatMap((value) => value as unknown[])) };
	if (typeof first === 'object') {
		const keys = [...new Set(present.flatMap((value) => Object.keys(value as object)))].sort();
		const properties = Object.fromEntries(
			keys.map((key) => [key, schemaOf(present.map((value) => (value as Record<string, unknown>)[key]))]),
		);
		return { type: 'object', properties };
	}
	return { type: typeof first };
}

const portal = () => ({ countryCode: t.sim.portalDemo.countryCode, phone: t.sim.portalDemo.phone });
const none = () => ({ authentication: 'none', baseUrl: t.sim.apiBaseUrl });

/** How to run each operation against a fresh simulator, in the order they can run. */
const samples: Array<[string, string, () => Promise<INodeParameters>, object?]> = [
	['patient', 'update', async () => ({ patientId: '1', additionalFields: { first_name: 'Ana' } })],
	['patient', 'getCustomFormResponse', async () => ({ patientId: '1' })],
	['consultation', 'get', async () => ({ consultationId: '1' })],
	['prescriptionDrug', 'addToConsultation', async () => ({ consultationId: 1, prescriptionDrugId: '310', additionalFields: { dose: '1 tableta' } })],
	['charge', 'addToInvoice', async () => ({ invoiceId: '1', quantity: 1, value: 45.5 })],
	['invoice', 'getByEncounter', async () => ({ encounterId: '1' })],
	['invoice', 'sign', async () => ({ invoiceId: '1' })],
	['invoice', 'email', async () => ({ invoiceId: '3' })],
	['invoice', 'downloadPdf', async () => ({ invoiceId: '3' })],
	['invoice', 'downloadXml', async () => ({ invoiceId: '3' })],
	['billingReport', 'get', async () => ({ start: '2025-03-01T00:00:00', end: '2025-03-31T00:00:00' })],
	['invoiceItemLocation', 'getAll', async () => ({ returnAll: true })],
	['waitingRoom', 'getAll', async () => ({ returnAll: true })],
	['state', 'get', async () => ({ stateId: '9' })],
	['webhookSubscription', 'create', async () => ({ url: 'https://n8n.example.test/webhook/schema', secret: 'schema-sample-secret-0123456789' })],
	['webhookSubscription', 'getAll', async () => ({ returnAll: true })],
	['webhookSubscription', 'delete', async () => ({ subscriptionId: String(t.sim.subscriptions()[0].id) })],
	[
		'event',
		'getAll',
		async () => {
			await t.sim.emit('consultation', 'consultation-finished', { id: 1, encounter_id: 1 });
			return { returnAll: true };
		},
	],
	['patientPortal', 'sendCode', async () => ({ ...none(), ...portal() }), { credentials: {} }],
	['patientPortal', 'verifyCode', async () => ({ ...none(), ...portal(), code: t.sim.portalDemo.code }), { credentials: {} }],
];

const operations = description.properties
	.filter((property) => property.name === 'operation')
	.flatMap((property) =>
		(property.options as Array<{ value: string }>).map((option) => `${String(property.displayOptions?.show?.resource?.[0])}/${option.value}`),
	);

it('every operation but Get People (needs a portal token from Verify Code) has a sample', () => {
	const sampled = samples.map(([resource, operation]) => `${resource}/${operation}`);
	expect(operations.filter((operation) => !sampled.includes(operation))).toEqual(['patientPortal/getPeople']);
});

/** Compares (or with UPDATE_SCHEMAS=1 writes) the schema file of these items; returns whether it was current. */
function schemaIsCurrent(file: string, items: unknown[]): boolean {
	const expected = `${JSON.stringify(schemaOf(items), null, '\t')}\n`;
	let current = '';
	try {
		current = readFileSync(file, 'utf8');
	} catch {
		// missing: not current
	}
	if (current === expected) return true;
	if (!UPDATE) return false;
	mkdirSync(dirname(file), { recursive: true });
	writeFileSync(file, expected);
	return true;
}

it("each operation's output schema matches what it outputs against the simulator", async () => {
	const stale: string[] = [];
	let portalToken = '';
	const check = async (resource: string, operation: string, parameters: INodeParameters, options: object = {}) => {
		const items = jsonOf(await t.run({ resource, operation, ...parameters }, { typeVersion: VERSION, ...options }));
		expect(items.length).toBeGreaterThan(0);
		if (operation === 'verifyCode') portalToken = String(items[0].token);
		if (!schemaIsCurrent(join(SCHEMA_DIR, resource, `${operation}.json`), items)) stale.push(`${resource}/${operation}`);
	};
	for (const [resource, operation, parameters, options] of samples) await check(resource, operation, await parameters(), options);
	await check('patientPortal', 'getPeople', {}, { credentials: { clinicPatientPortalApi: { baseUrl: t.sim.apiBaseUrl, portalToken } } });
	expect(stale).toEqual([]); // run `npm run schemas` after changing what an operation outputs
}, 60_000);

it("the triggers' output schemas (one per node, no resource or operation) match what they emit", async () => {
	const patient = { id: 31, account_id: 1201, first_name: 'Ana' };
	forgetProcessMemory();
	// The event is in the log first, as the service writes it before delivering: the item carries its id.
	await t.sim.emit('patient', 'patient-created', patient);
	const delivered = await deliverWebhook({
		parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED], options: { verification: 'none' } },
		credentials: credentialsFor(t.sim),
		rawBody: Buffer.from(JSON.stringify({ value: patient })),
		headers: { 'content-type': 'application/json' },
		query: { event: PATIENT_CREATED },
		typeVersion: TRIGGER_VERSION,
	});
	const store = new CredentialStore();
	store.add('clinicApi', integrationCredentials(t.sim));
	const polled = await runPoll({ parameters: { authentication: 'clinicApi', events: [PATIENT_CREATED] }, store, mode: 'manual', typeVersion: TRIGGER_VERSION });
	const emitted = {
		ClinicTrigger: (delivered.workflowData?.[0] ?? []).map((item) => item.json),
		ClinicEventLogTrigger: (polled.items ?? []).map((item) => item.json),
	};
	const stale = Object.entries(emitted)
		.filter(([node, items]) => items.length === 0 || !schemaIsCurrent(join(NODES_DIR, node, '__schema__', `${versionDir(TRIGGER_VERSION)}.json`), items))
		.map(([node]) => node);
	expect(stale).toEqual([]); // run `npm run schemas` after changing what a trigger emits
});
