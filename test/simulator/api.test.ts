import { startSimulator, type Simulator } from './index';
import { accessToken, api, bearer, request } from './testing';

let sim: Simulator;
let token: string;

beforeAll(async () => {
	sim = await startSimulator();
	token = await accessToken(sim);
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => sim.reset());

const download = (id: number, format: 'pdf' | 'xml', query = `token=${token}`, headers = {}) =>
	request(`${sim.apiBaseUrl}/invoices/${id}/download_cfdi.${format}${query ? `?${query}` : ''}`, { headers });

describe('public lookups', () => {
	test('states: the 32 Mexican states, wrapped in state; unknown -> 404 State not found', async () => {
		const cdmx = await api(sim, undefined, '/states/9');
		expect(cdmx.json).toEqual({
			state: {
				id: 9,
				name: 'Ciudad de México',
				abbrv: 'CDMX',
				links: { country: expect.any(String), counties: expect.any(String) },
			},
		});
		expect((await api(sim, undefined, '/states/32')).json.state.name).toBe('Zacatecas');
		const missing = await api(sim, undefined, '/states/33');
		expect(missing.status).toBe(404);
		expect(missing.json).toEqual({ error: 'State not found' });
	});

	test('waiting rooms: two rooms with schedule configuration', async () => {
		const answer = await api(sim, undefined, '/waiting_rooms');
		expect(answer.json.waiting_rooms).toHaveLength(2);
		const [room] = answer.json.waiting_rooms;
		expect(room).toMatchObject({
			id: 1,
			organization_id: 38729,
			name: expect.any(String),
			slug: 'consulta-general',
			waiting_room_configuration: { allow_guest: true },
			selected_accounts: expect.any(Array),
		});
		expect(Object.keys(room.schedule_configuration.schedule).sort()).toEqual(
			['consultation_duration', 'fri', 'mon', 'sat', 'sun', 'thu', 'tue', 'wed', 'weeks_limit'].sort(),
		);
		expect(room.schedule_configuration.timezone).toBe('America/Mexico_City');
	});
});

describe('people', () => {
	test('PUT /people/{id} updates only the given fields, merges person_attributes and emits patient-updated', async () => {
		const answer = await api(sim, token, '/people/1', {
			method: 'PUT',
			body: {
				person: {
					email: 'mfgonzalez@example.mx',
					person_attributes: { insurance_claim_folio: 'SIN-2025-0042', insurance_claim_sinister_date: '2025-03-01' },
				},
			},
		});
		expect(answer.status).toBe(200);
		const person = answer.json.person;
		expect(person).toMatchObject({
			id: 1,
			first_name: 'María Fernanda',
			full_name: 'María Fernanda González López',
			email: 'mfgonzalez@example.mx',
			born_at: '1988-04-12',
		});
		expect(person.person_attributes).toMatchObject({
			send_reminders: true,
			insurance_name: 'GNP Seguros',
			insurance_claim_folio: 'SIN-2025-0042',
			insurance_claim_sinister_date: '2025-03-01',
		});
		expect(Object.keys(person.links)).toHaveLength(8);
		const [event] = sim.events();
		expect(event).toMatchObject({ topic: 'clinic-38729.patient', name: 'patient-updated' });
		expect(event.value).toMatchObject({ id: 1, email: 'mfgonzalez@example.mx', organization_id: 38729 });
	});

	test('invalid email, impossible date, unknown field -> 422 with errors per field; nothing changes', async () => {
		const answer = await api(sim, token, '/people/1', {
			method: 'PUT',
			body: {
				person: {
					email: 'not-an-email',
					born_at: '1988-02-30',
					nickname: 'Mafer',
					person_attributes: { insurance_taxed: 'maybe', favourite_colour: 'blue' },
				},
			},
		});
		expect(answer.status).toBe(422);
		expect(answer.json.errors).toEqual({
			email: ['is invalid'],
			born_at: ['is invalid'],
			nickname: ['is not a permitted attribute'],
			'person_attributes.insurance_taxed': ['is invalid'],
			'person_attributes.favourite_colour': ['is not a permitted attribute'],
		});
		expect(sim.data.people.get(1)?.email).toBe('maria.gonzalez@example.mx');
		expect(sim.events()).toHaveLength(0);
	});

	test('a body without the person wrapper -> 400; unknown person -> 404 Person not found', async () => {
		const unwrapped = await api(sim, token, '/people/1', { method: 'PUT', body: { first_name: 'Ana' } });
		expect(unwrapped.status).toBe(400);
		const missing = await api(sim, token, '/people/999', { method: 'PUT', body: { person: { first_name: 'A' } } });
		expect(missing.status).toBe(404);
		expect(missing.json).toEqual({ error: 'Person not found' });
	});

	test('custom form responses per person; unknown person -> 404', async () => {
		const answer = await api(sim, token, '/people/1/custom_form_response');
		expect(answer.json.custom_form_responses).toHaveLength(2);
		expect((await api(sim, token, '/people/3/custom_form_response')).json).toEqual({ custom_form_responses: [] });
		expect((await api(sim, token, '/people/999/custom_form_response')).status).toBe(404);
	});
});

describe('consultations and prescriptions', () => {
	test('GET /consultations/{id}: one finished, one not; unknown -> 404', async () => {
		const finished = (await api(sim, token, '/consultations/1')).json.consultation;
		expect(finished.finished_at).toEqual(expect.any(String));
		expect(Object.keys(finished.links)).toHaveLength(19);
		expect((await api(sim, token, '/consultations/2')).json.consultation.finished_at).toBeNull();
		const missing = await api(sim, token, '/consultations/999');
		expect(missing.json).toEqual({ error: 'Consultation not found' });
	});

	test('POST /consultation_prescription_drugs creates (201) and emits prescription-created', async () => {
		const answer = await api(sim, token, '/consultation_prescription_drugs', {
			method: 'POST',
			body: {
				consultation_prescription_drug: {
					dose: '1 tableta',
					frequency: 'cada 8 horas',
					duration: '5 días',
					consultation_id: '1',
					prescription_drug_id: '3301',
					prescription_id: '88',
					account_id: '1201',
				},
			},
		});
		expect(answer.status).toBe(201);
		expect(answer.json.consultation_prescription_drug).toMatchObject({
			id: expect.any(Number),
			consultation_id: 1,
			prescription_drug_id: 3301,
			dose: '1 tableta',
		});
		expect(sim.events().map((e) => [e.topic, e.name])).toEqual([['clinic-38729.prescription', 'prescription-created']]);
	});

	test('a prescription for a consultation that does not exist -> 422', async () => {
		const answer = await api(sim, token, '/consultation_prescription_drugs', {
			method: 'POST',
			body: { consultation_prescription_drug: { dose: '1', consultation_id: '999' } },
		});
		expect(answer.status).toBe(422);
		expect(answer.json.errors.consultation).toEqual(['must exist']);
	});
});

describe('charges and invoices', () => {
	test('GET /encounters/{id}/invoice: unsigned invoice with empty tax_attributes', async () => {
		const answer = await api(sim, token, '/encounters/2/invoice');
		expect(answer.json.invoice).toMatchObject({
			id: 2,
			payment_type: null,
			tax_attributes: {},
			signed_at: null,
			total_cents: 0,
			globally_invoiced: false,
		});
		expect((await api(sim, token, '/encounters/4/invoice')).json).toEqual({ error: 'Invoice not found' });
		expect((await api(sim, token, '/encounters/999/invoice')).json).toEqual({ error: 'Encounter not found' });
	});

	test('POST /consultation_invoice_items adds a charge, updates the totals, emits invoice-item-created', async () => {
		const before = sim.data.invoices.get(1)?.total_cents ?? 0;
		const answer = await api(sim, token, '/consultation_invoice_items', {
			method: 'POST',
			body: {
				consultation_invoice_item: {
					quantity: '2',
					value: '45.50',
					accounting_type: 'product',
					account_id: '1201',
					invoice_id: '1',
					invoice_item_id: '3',
				},
			},
		});
		expect(answer.status).toBe(201);
		expect(answer.json.consultation_invoice_item).toMatchObject({ invoice_id: 1, quantity: 2, value: 45.5 });
		const invoice = (await api(sim, token, '/encounters/1/invoice')).json.invoice;
		expect(invoice.total_cents).toBe(before + 9100 + 1456); // 2 x 45.50 + 16 % IVA
		expect(invoice.total_tax_cents).toBe(1456);
		expect(sim.events().map((e) => e.name)).toEqual(['invoice-item-created']);
	});

	test('a charge needs an existing invoice and numeric quantity and value -> 422', async () => {
		const answer = await api(sim, token, '/consultation_invoice_items', {
			method: 'POST',
			body: { consultation_invoice_item: { quantity: 'two', value: 'abc', invoice_id: '999' } },
		});
		expect(answer.status).toBe(422);
		expect(answer.json.errors).toEqual({
			invoice: ['must exist'],
			quantity: ['is not a number'],
			value: ['is not a number'],
		});
	});

	test('a charge on a signed invoice -> 422 Invoice is already signed', async () => {
		const answer = await api(sim, token, '/consultation_invoice_items', {
			method: 'POST',
			body: { consultation_invoice_item: { quantity: '1', value: '100', invoice_id: '3' } },
		});
		expect(answer.status).toBe(422);
		expect(answer.json).toEqual({ error: 'Invoice is already signed' });
	});

	test('sign sets signed_at and tax_attributes, emits invoice-updated; signing twice -> 422', async () => {
		const signed = await api(sim, token, '/invoices/1/sign', { method: 'POST' });
		expect(signed.status).toBe(200);
		expect(signed.json.invoice.signed_at).toEqual(expect.any(String));
		expect(signed.json.invoice.tax_attributes).toEqual({ use_cfdi: 'S01', payment_form: '01', payment_method: 'PUE' });
		expect(sim.data.invoices.get(1)?.cfdi_uuid).toMatch(/^[0-9A-F-]{36}$/);
		expect(sim.events().map((e) => [e.topic, e.name])).toEqual([['clinic-38729.invoice', 'invoice-updated']]);

		const again = await api(sim, token, '/invoices/1/sign', { method: 'POST' });
		expect(again.status).toBe(422);
		expect(again.json).toEqual({ error: 'Invoice is already signed' });
	});

	test('an invoice without charges cannot be signed; unknown invoice -> 404', async () => {
		expect((await api(sim, token, '/invoices/2/sign', { method: 'POST' })).status).toBe(422);
		const missing = await api(sim, token, '/invoices/999/sign', { method: 'POST' });
		expect(missing.json).toEqual({ error: 'Invoice not found' });
	});

	test('email_invoice: signed invoices only, recorded in the store', async () => {
		const unsigned = await api(sim, token, '/invoices/1/email_invoice', { method: 'POST' });
		expect(unsigned.status).toBe(422);
		expect(unsigned.json.error).toEqual(expect.any(String));
		const sent = await api(sim, token, '/invoices/3/email_invoice', { method: 'POST' });
		expect(sent.status).toBe(200);
		expect(sent.json.invoice.tax_attributes.use_cfdi).toBe('S01');
		expect(sim.data.invoiceEmails).toEqual([{ invoice_id: 3, to: 'ana.ramirez@example.mx', sent_at: expect.any(String) }]);
	});

	test('invoice item locations', async () => {
		const answer = await api(sim, token, '/invoice_item_locations');
		expect(answer.json.invoice_item_locations.length).toBeGreaterThanOrEqual(2);
	});
});

describe('CFDI downloads', () => {
	test('take the token in the query parameter only: a bearer header alone -> 401', async () => {
		const headerOnly = await download(3, 'pdf', '', bearer(token));
		expect(headerOnly.status).toBe(401);
		expect(headerOnly.json).toEqual({ error: 'Unauthorized' });
		expect((await download(3, 'xml', 'access_token=' + token)).status).toBe(401);
	});

	test('PDF: a valid small PDF naming the invoice, as an attachment', async () => {
		const answer = await download(3, 'pdf');
		expect(answer.status).toBe(200);
		expect(answer.headers['content-type']).toBe('application/pdf');
		expect(answer.headers['content-disposition']).toBe('attachment; filename="3.pdf"');
		const text = answer.raw.toString('latin1');
		expect(text.startsWith('%PDF-1.4')).toBe(true);
		expect(text).toContain('invoice 3');
		expect(text.trimEnd().endsWith('%%EOF')).toBe(true);
		// every xref offset points at its object
		const startxref = Number(/startxref\n(\d+)/.exec(text)?.[1]);
		expect(text.slice(startxref, startxref + 4)).toBe('xref');
		const offsets = [...text.slice(startxref).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
		expect(offsets).toHaveLength(6);
		offsets.forEach((offset, index) => expect(text.slice(offset).startsWith(`${index + 1} 0 obj`)).toBe(true));
	});

	test('XML: CFDI 4.0 with the TimbreFiscalDigital UUID, and no content type', async () => {
		const answer = await download(3, 'xml');
		expect(answer.status).toBe(200);
		expect(answer.headers['content-type']).toBeUndefined();
		expect(answer.headers['content-disposition']).toBe('attachment; filename="3.xml"');
		expect(answer.text).toMatch(/<cfdi:Comprobante [^>]*xmlns:cfdi="http:\/\/www\.sat\.gob\.mx\/cfd\/4"/);
		expect(answer.text).toMatch(/<cfdi:Comprobante [^>]*Version="4\.0"/);
		const stamp = /<cfdi:Complemento><tfd:TimbreFiscalDigital ([^>]*)\/><\/cfdi:Complemento>/.exec(answer.text);
		expect(stamp?.[1]).toContain('xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital"');
		expect(stamp?.[1]).toContain('Version="1.1"');
		expect(stamp?.[1]).toContain(`UUID="${sim.data.invoices.get(3)?.cfdi_uuid}"`);
	});

	test('an unsigned invoice has no CFDI -> 422; unknown -> 404', async () => {
		const unsigned = await download(1, 'pdf');
		expect(unsigned.status).toBe(422);
		expect(unsigned.json.error).toEqual(expect.any(String));
		expect((await download(999, 'xml')).status).toBe(404);
	});

	test('a freshly signed invoice downloads with its own UUID', async () => {
		await api(sim, token, '/invoices/1/sign', { method: 'POST' });
		const xml = await download(1, 'xml');
		expect(xml.text).toContain(`UUID="${sim.data.invoices.get(1)?.cfdi_uuid}"`);
	});

	test('the token parameter name is configurable', async () => {
		const other = await startSimulator({ cfdiTokenParam: 'access_token' });
		try {
			const otherToken = await accessToken(other);
			const base = `${other.apiBaseUrl}/invoices/3/download_cfdi.pdf`;
			expect((await request(`${base}?access_token=${otherToken}`)).status).toBe(200);
			expect((await request(`${base}?token=${otherToken}`)).status).toBe(401);
		} finally {
			await other.close();
		}
	});
});

describe('billing report', () => {
	const report = (query: string) => api(sim, token, `/reports/consultation_invoice_items?${query}`);

	test('lists encounters with invoices in the date range, with metrics', async () => {
		const answer = await report('start=2025-03-01&end=2025-03-31');
		expect(answer.status).toBe(200);
		expect(answer.json.encounters.map((e: { id: number }) => e.id)).toEqual([1, 2]);
		expect(answer.json.encounters[0]).toMatchObject({
			id: 1,
			invoice_id: 1,
			total_cents: 113000,
			charges_count: 2,
			subtotal: 113000,
			payment: 0,
			full_name: 'María Fernanda González López',
			physician_name: expect.any(String),
			status: 'unsigned',
		});
		expect(answer.json.invoice_metrics).toEqual([
			{ id: null, total_cents: 113000, total_items: 2, total_items_payments: 0, average: 56500, total_payments: '0.00' },
		]);
	});

	test('filters by status and person', async () => {
		const signed = await report('start=2025-01-01&end=2025-12-31&status=signed');
		expect(signed.json.encounters.map((e: { id: number }) => e.id)).toEqual([3]);
		expect(signed.json.invoice_metrics[0].total_payments).toBe('755.56');
		const person = await report('start=2025-01-01&end=2025-12-31&person=2');
		expect(person.json.encounters.map((e: { id: number }) => e.id)).toEqual([2]);
	});

	test('invalid dates -> 422', async () => {
		const answer = await report('start=2025-13-01&end=yesterday');
		expect(answer.status).toBe(422);
		expect(Object.keys(answer.json.errors).sort()).toEqual(['end', 'start']);
		expect((await report('start=2025-03-31&end=2025-03-01')).status).toBe(422);
	});
});
