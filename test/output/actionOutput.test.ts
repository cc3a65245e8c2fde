/**
 * Output: Simplified / Raw / Selected Fields on the Clinic node (version 1.1), and version 1
 * (every workflow saved before 1.1) giving exactly what it gave before.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { INodeParameters } from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import { Clinic } from '../../nodes/Clinic/Clinic.node';
import { resourceOptions, resources } from '../../nodes/Clinic/actions/resources';
import { jsonOf, useSimulator } from '../Clinic/support';

const t = useSimulator();
const V1 = { typeVersion: 1 };
const V11 = { typeVersion: 1.1 };

/** Seed values of consultation 1 and patient 1 that no Simplified output may hold. */
const CLINICAL = ['Control de hipertensión arterial', 'Losartán', 'Cefalea ocasional', 'Continuar tratamiento antihipertensivo'];
const PERSONAL = ['María Fernanda', 'González López', '5512345678', 'maria.gonzalez@example.mx', 'GOLM880412MDFNPR05', 'Insurgentes', 'Penicilina'];

function expectNone(values: unknown, words: string[]) {
	const text = JSON.stringify(values);
	for (const word of words) expect(text).not.toContain(word);
}

const consultation = (extra: INodeParameters = {}) => ({ resource: 'consultation', operation: 'get', consultationId: '1', ...extra });

describe('saved workflows (node version 1) output what they always did', () => {
	it('Consultation > Get: Simplify off gives the whole record, on drops links and empty fields', async () => {
		const whole = jsonOf(await t.run(consultation(), V1))[0];
		expect(whole).toMatchObject({ id: 1, encounter_id: 1, cause: 'Control de hipertensión arterial', links: expect.any(Object) });
		expect(whole).toHaveProperty('physical_examination', null);
		const simple = jsonOf(await t.run(consultation({ simplify: true }), V1))[0];
		expect(simple).toMatchObject({ id: 1, person_id: 1, cause: 'Control de hipertensión arterial' });
		expect(simple).not.toHaveProperty('links');
		expect(simple).not.toHaveProperty('physical_examination');
	});

	it('a version 1 node ignores an Output parameter it cannot show', async () => {
		const whole = jsonOf(await t.run(consultation({ outputMode: 'fields', outputFields: [] }), V1))[0];
		expect(whole.cause).toBe('Control de hipertensión arterial');
	});

	it('Invoice, Patient, form responses and billing report: the whole answer, as before', async () => {
		expect(jsonOf(await t.run({ resource: 'invoice', operation: 'getByEncounter', encounterId: '1' }, V1))[0]).toMatchObject({
			cause: 'Control de hipertensión arterial',
			links: expect.any(Object),
		});
		const forms = jsonOf(await t.run({ resource: 'patient', operation: 'getCustomFormResponse', patientId: '1' }, V1));
		expect(JSON.stringify(forms)).toContain('Penicilina');
		const report = jsonOf(
			await t.run({ resource: 'billingReport', operation: 'get', start: '2025-01-01', end: '2025-12-31' }, V1),
		);
		expect(report.map((e) => e.full_name)).toContain('María Fernanda González López');
	});

	it('Event > Get Many: whole events, or Simplify as before', async () => {
		await t.sim.emit('patient', 'patient-updated', { id: 1, first_name: 'María Fernanda', telephone2: '5512345678' });
		const whole = jsonOf(await t.run({ resource: 'event', operation: 'getAll', returnAll: true }, V1));
		expect(JSON.stringify(whole)).toContain('María Fernanda');
		const simple = jsonOf(await t.run({ resource: 'event', operation: 'getAll', returnAll: true, simplify: true }, V1));
		expect(simple[0]).toMatchObject({ value: { first_name: 'María Fernanda' }, deliveries: expect.any(Number) });
	});
});

describe('new nodes (version 1.1): Simplified by default', () => {
	it('Consultation > Get: ids and times, no clinical text', async () => {
		const [simple] = jsonOf(await t.run(consultation(), V11));
		expect(simple).toEqual({
			id: 1,
			account_id: expect.any(Number),
			encounter_id: 1,
			encode_id: expect.any(String),
			person_id: 1,
			created_at: expect.any(String),
			starts_at: '2025-03-10T15:30:00.000Z',
			finished_at: '2025-03-10T16:05:00.000Z',
		});
	});

	it('Invoice > Get by Encounter, Sign and Email: amounts and ids, without the cause', async () => {
		const [got] = jsonOf(await t.run({ resource: 'invoice', operation: 'getByEncounter', encounterId: '1' }, V11));
		expect(got).toMatchObject({ id: 1, encounter_id: 1, person_id: 1, consultation_id: 1, total_cents: expect.any(Number) });
		expect(got).not.toHaveProperty('cause');
		expect(got).not.toHaveProperty('links');
		const [signed] = jsonOf(await t.run({ resource: 'invoice', operation: 'sign', invoiceId: '1' }, V11));
		expect(signed).toMatchObject({ id: 1, signed_at: expect.any(String), tax_attributes: expect.any(Object) });
		const [emailed] = jsonOf(await t.run({ resource: 'invoice', operation: 'email', invoiceId: '1' }, V11));
		// The item says the e-mail went out, for the next step's {{ $json.email_sent }}.
		expect(emailed).toMatchObject({ email_sent: true, id: 1, total_cents: expect.any(Number) });
		expect(t.sim.data.invoiceEmails.at(-1)).toMatchObject({ invoice_id: 1 });
		const [picked] = jsonOf(await t.run({ resource: 'invoice', operation: 'email', invoiceId: '1', outputMode: 'fields', outputFields: [] }, V11));
		expect(picked).toMatchObject({ email_sent: true, id: 1 });
		const [raw] = jsonOf(await t.run({ resource: 'invoice', operation: 'email', invoiceId: '1', outputMode: 'raw' }, V11));
		expect(raw).not.toHaveProperty('email_sent');
		expectNone([got, signed, emailed], CLINICAL);
	});

	it('Patient > Update: the ids and the medical record number, nothing personal', async () => {
		const [updated] = jsonOf(
			await t.run({ resource: 'patient', operation: 'update', patientId: '1', additionalFields: { email: 'mf.gonzalez@example.mx' } }, V11),
		);
		expect(updated).toEqual({ id: 1, account_id: expect.any(Number), address_state_id: 9, phone_country_id: expect.any(Number), medical_record: expect.any(String) });
		expect(t.sim.data.people.get(1)!.email).toBe('mf.gonzalez@example.mx');
	});

	it('form responses without their answers; portal people without names or phones', async () => {
		const forms = jsonOf(await t.run({ resource: 'patient', operation: 'getCustomFormResponse', patientId: '1' }, V11));
		expect(forms.map((f) => f.custom_form_name)).toEqual(['Historia clínica inicial', 'Consentimiento informado']);
		expect(forms[0]).toEqual(expect.objectContaining({ id: 71, person_id: 1, custom_form_id: 5 }));
		expectNone(forms, ['Penicilina', '¿Padece']);

		const none = { authentication: 'none', baseUrl: t.sim.apiBaseUrl };
		const { countryCode, phone, code } = t.sim.portalDemo;
		const portal = { resource: 'patientPortal', countryCode, phone, ...none };
		await t.run({ ...portal, operation: 'sendCode' }, { credentials: {}, ...V11 });
		const [{ token }] = jsonOf(await t.run({ ...portal, operation: 'verifyCode', code }, { credentials: {}, ...V11 }));
		const people = jsonOf(
			await t.run(
				{ resource: 'patientPortal', operation: 'getPeople', tokenSource: 'parameter', portalToken: String(token), portalBaseUrl: t.sim.apiBaseUrl },
				{ credentials: {}, ...V11 },
			),
		);
		expect(people.map((p) => p.id)).toEqual([1, 4]);
		expectNone(people, PERSONAL);
	});

	it('billing report: totals and states per encounter, without the patient or the cause, in either layout', async () => {
		const params = { resource: 'billingReport', operation: 'get', start: '2025-01-01', end: '2025-12-31' };
		const encounters = jsonOf(await t.run(params, V11));
		expect(encounters.length).toBeGreaterThan(0);
		expect(encounters[0]).toEqual(expect.objectContaining({ id: expect.any(Number), invoice_id: expect.any(Number), total_cents: expect.any(Number) }));
		const [report] = jsonOf(await t.run({ ...params, output: 'report' }, V11));
		expect((report.encounters as unknown[]).length).toBe(encounters.length);
		expect(report.invoice_metrics).toEqual(expect.any(Array));
		expectNone([encounters, report], [...CLINICAL, 'María Fernanda', 'José Luis']);
	});

	it('Event > Get Many: each event whole but its value reduced to ids', async () => {
		await t.sim.emit('patient', 'patient-updated', { id: 1, first_name: 'María Fernanda', telephone2: '5512345678', account_id: 1201 });
		const [event] = jsonOf(await t.run({ resource: 'event', operation: 'getAll', returnAll: true }, V11));
		expect(event).toMatchObject({ name: 'patient-updated', topic: `${t.sim.topicPrefix}.patient`, value: { id: 1, account_id: 1201 } });
		expect(Object.keys(event.value as object).sort()).toEqual(['account_id', 'id']);
		const [picked] = jsonOf(
			await t.run({ resource: 'event', operation: 'getAll', returnAll: true, outputMode: 'fields', outputFields: 'first_name' }, V11),
		);
		expect(picked.value).toEqual({ id: 1, account_id: 1201, first_name: 'María Fernanda' });
	});
});

describe('Raw and Selected Fields', () => {
	it('Raw is the record as version 1 gave it', async () => {
		const v1 = jsonOf(await t.run(consultation(), V1))[0];
		const raw = jsonOf(await t.run(consultation({ outputMode: 'raw' }), V11))[0];
		expect(raw).toEqual(v1);
	});

	it('Selected Fields: the ids plus exactly the fields picked (a list, or text from an expression)', async () => {
		const [picked] = jsonOf(await t.run(consultation({ outputMode: 'fields', outputFields: ['cause'] }), V11));
		expect(picked).toEqual({ id: 1, account_id: expect.any(Number), encounter_id: 1, encode_id: expect.any(String), person_id: 1, cause: 'Control de hipertensión arterial' });
		const [idsOnly] = jsonOf(await t.run(consultation({ outputMode: 'fields', outputFields: [] }), V11));
		expect(Object.keys(idsOnly).sort()).toEqual(['account_id', 'encode_id', 'encounter_id', 'id', 'person_id']);
		const [fromText] = jsonOf(
			await t.run({ resource: 'patient', operation: 'update', patientId: '2', additionalFields: { email: 'jl.hernandez@example.mx' }, outputMode: 'fields', outputFields: 'email, first_name' }, V11),
		);
		expect(fromText).toMatchObject({ id: 2, email: 'jl.hernandez@example.mx', first_name: 'José Luis' });
		expect(fromText).not.toHaveProperty('last_name');
	});
});

describe('the editor', () => {
	const description = new Clinic().description;
	const asTool = { ...description, name: `${description.name}Tool` };
	const defaults = (type: typeof description, version: number, resource: string, operation: string) =>
		NodeHelpers.getNodeParameters(type.properties, { resource, operation }, true, false, { typeVersion: version }, type) ?? {};

	it('new nodes are version 1.2', () => {
		expect(description.defaultVersion).toBe(1.2);
		expect(description.version).toEqual([1, 1.1, 1.2]);
	});

	it.each([
		['consultation', 'get'],
		['event', 'getAll'],
		['invoice', 'getByEncounter'],
		['invoice', 'sign'],
		['invoice', 'email'],
		['patient', 'update'],
		['patient', 'getCustomFormResponse'],
		['patientPortal', 'getPeople'],
		['billingReport', 'get'],
	])('%s %s: Output Simplified in a workflow and as a tool from 1.1; version 1 has no Output', (resource, operation) => {
		expect(defaults(description, 1.1, resource, operation)).toMatchObject({ outputMode: 'simple' });
		expect(defaults(asTool, 1.1, resource, operation)).toMatchObject({ outputMode: 'simple' });
		expect(defaults(description, 1, resource, operation)).not.toHaveProperty('outputMode');
		expect(defaults(description, 1.1, resource, operation)).not.toHaveProperty('simplify');
	});

	it('operations without patient data have no Output', () => {
		expect(defaults(description, 1.1, 'waitingRoom', 'getAll')).not.toHaveProperty('outputMode');
		expect(defaults(description, 1.1, 'invoice', 'downloadPdf')).not.toHaveProperty('outputMode');
	});
});

describe('docs/patient-data.md table', () => {
	const readme = readFileSync(join(__dirname, '..', '..', 'docs', 'patient-data.md'), 'utf8');
	const table = readme.slice(readme.indexOf('<!-- output:start -->'), readme.indexOf('<!-- output:end -->'));
	const description = new Clinic().description;
	const withOutput = Object.entries(resources).flatMap(([resource, { description: properties }]) =>
		(properties as Array<{ name: string; options?: Array<{ name: string; value: unknown }> }>)
			.find((property) => property.name === 'operation')!
			.options!.filter(
				(option) =>
					'outputMode' in
					(NodeHelpers.getNodeParameters(description.properties, { resource, operation: option.value as string }, true, false, { typeVersion: 1.1 }, description) ?? {}),
			)
			.map((option) => [resourceOptions.find((r) => r.value === resource)!.name, option.name]),
	);

	it('covers nine operations', () => {
		expect(withOutput).toHaveLength(9);
	});

	it.each(withOutput)('names %s → %s', (resourceName, operationName) => {
		const row = table
			.split('\n')
			.find((line) =>
				line
					.split('|')[1]
					?.split(',')
					.some((step) => step.trim().startsWith(`${resourceName} → `) && step.split('→')[1].split('/').map((name) => name.trim()).includes(operationName)),
			);
		expect(row).toBeDefined();
	});
});
