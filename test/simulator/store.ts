/**
 * The simulator's data: realistic Mexican seed records kept in the shapes of the
 * spec's resource tables, and the functions that turn them into wire JSON.
 * Internal records carry a few extra fields (person_id, cfdi_uuid, ...) that the
 * wire shapes leave out.
 */
import { randomUUID } from 'node:crypto';

export const ORGANIZATION_ID = 38729;
export const DEMO_ACCOUNT_ID = 1201;
const API = '/api/v1';

export interface PersonRecord {
	id: number;
	first_name: string;
	last_name: string;
	telephone: string | null;
	email: string | null;
	address_city: string | null;
	address_street: string | null;
	address_zipcode: string | null;
	identity_number: string | null;
	notes: string | null;
	medical_record: string;
	partner_patient_id: string | null;
	born_at: string;
	gender: string;
	telephone2: string;
	address_state_id: number;
	account_id: number;
	phone_country_id: number;
	person_attributes: Record<string, unknown>;
	is_migrated: boolean;
	without_cellphone: boolean;
	chat_invitation_sent: boolean;
	chat_invitation_date: string | null;
	admission_form: boolean;
	send_welcome_email: boolean;
	person_token_id: number | null;
	organization_id: number;
	creator_id: number;
	updater_id: number;
	created_at: string;
	updated_at: string;
	deleted_at: string | null;
}

export interface ConsultationRecord {
	id: number;
	person_id: number;
	account_id: number;
	encounter_id: number;
	cause: string;
	medical_instructions: string;
	encode_id: string;
	created_at: string;
	starts_at: string;
	finished_at: string | null;
	physical_examination: string | null;
	subjective_symptoms: string | null;
	cause_extended: string | null;
	treatment_plan: string | null;
	procedure: string | null;
	account_medical_instructions: string | null;
	partner_prescription_status: string | null;
	sis: Record<string, unknown>;
	lab_test: Record<string, unknown>;
	consultation_attributes: Record<string, unknown>;
}

export interface EncounterRecord {
	id: number;
	person_id: number;
	consultation_id: number | null;
	invoice_id: number | null;
	physician_name: string;
	created_at: string;
}

export interface TaxAttributes {
	use_cfdi?: string;
	payment_form?: string;
	payment_method?: string;
}

export interface InvoiceRecord {
	id: number;
	encounter_id: number;
	person_id: number;
	consultation_id: number | null;
	payment_type: string | null;
	discount_rate: number | null;
	discount_amount: number | null;
	tax_rate: number | null;
	tax_amount: number | null;
	total_cents: number;
	total_discount_cents: number;
	total_tax_cents: number;
	tax_attributes: TaxAttributes;
	signed_at: string | null;
	globally_invoiced: boolean;
	cause: string;
	starts_at: string;
	/** Fiscal folio (UUID of the TimbreFiscalDigital); set when signed. Not part of the wire shape. */
	cfdi_uuid: string | null;
}

export interface ChargeRecord {
	id: number;
	quantity: number;
	value: number;
	accounting_type: string;
	account_id: number;
	invoice_id: number;
	invoice_item_id: number | null;
	description: string;
	subtotal_cents: number;
	tax_cents: number;
	total_cents: number;
	created_at: string;
	updated_at: string;
}

export interface PrescriptionDrugRecord {
	id: number;
	dose: string | null;
	frequency: string | null;
	duration: string | null;
	consultation_id: number;
	prescription_drug_id: number | null;
	prescription_id: number | null;
	account_id: number;
	created_at: string;
	updated_at: string;
}

export interface StateRecord {
	id: number;
	name: string;
	abbrv: string;
}

export interface InvoiceEmailRecord {
	invoice_id: number;
	to: string;
	sent_at: string;
}

export interface Store {
	people: Map<number, PersonRecord>;
	consultations: Map<number, ConsultationRecord>;
	encounters: Map<number, EncounterRecord>;
	invoices: Map<number, InvoiceRecord>;
	charges: ChargeRecord[];
	prescriptionDrugs: PrescriptionDrugRecord[];
	states: Map<number, StateRecord>;
	waitingRooms: Array<Record<string, unknown>>;
	invoiceItemLocations: Array<Record<string, unknown>>;
	customFormResponses: Array<Record<string, unknown> & { person_id: number }>;
	/** Invoice item catalog (the `invoice_item_id` of a charge). */
	invoiceItemCatalog: Map<number, { id: number; name: string; value: number; accounting_type: string }>;
	invoiceEmails: InvoiceEmailRecord[];
	nextId: {
		person: number;
		encounter: number;
		invoice: number;
		charge: number;
		prescriptionDrug: number;
	};
}

const MEXICAN_STATES: Array<[string, string]> = [
	['Aguascalientes', 'AGS'],
	['Baja California', 'BC'],
	['Baja California Sur', 'BCS'],
	['Campeche', 'CAMP'],
	['Coahuila de Zaragoza', 'COAH'],
	['Colima', 'COL'],
	['Chiapas', 'CHIS'],
	['Chihuahua', 'CHIH'],
	['Ciudad de México', 'CDMX'],
	['Durango', 'DGO'],
	['Guanajuato', 'GTO'],
	['Guerrero', 'GRO'],
	['Hidalgo', 'HGO'],
	['Jalisco', 'JAL'],
	['Estado de México', 'MEX'],
	['Michoacán de Ocampo', 'MICH'],
	['Morelos', 'MOR'],
	['Nayarit', 'NAY'],
	['Nuevo León', 'NL'],
	['Oaxaca', 'OAX'],
	['Puebla', 'PUE'],
	['Querétaro', 'QRO'],
	['Quintana Roo', 'QROO'],
	['San Luis Potosí', 'SLP'],
	['Sinaloa', 'SIN'],
	['Sonora', 'SON'],
	['Tabasco', 'TAB'],
	['Tamaulipas', 'TAMPS'],
	['Tlaxcala', 'TLAX'],
	['Veracruz de Ignacio de la Llave', 'VER'],
	['Yucatán', 'YUC'],
	['Zacatecas', 'ZAC'],
];

export const nowIso = (): string => new Date().toISOString();

function person(
	fields: Pick<
		PersonRecord,
		| 'id'
		| 'first_name'
		| 'last_name'
		| 'email'
		| 'born_at'
		| 'gender'
		| 'telephone2'
		| 'address_state_id'
	> &
		Partial<PersonRecord>,
): PersonRecord {
	return {
		telephone: null,
		address_city: null,
		address_street: null,
		address_zipcode: null,
		identity_number: null,
		notes: null,
		medical_record: `EXP-${String(fields.id).padStart(6, '0')}`,
		partner_patient_id: null,
		account_id: DEMO_ACCOUNT_ID,
		phone_country_id: 1,
		person_attributes: { send_reminders: true },
		is_migrated: false,
		without_cellphone: false,
		chat_invitation_sent: false,
		chat_invitation_date: null,
		admission_form: false,
		send_welcome_email: true,
		person_token_id: null,
		organization_id: ORGANIZATION_ID,
		creator_id: DEMO_ACCOUNT_ID,
		updater_id: DEMO_ACCOUNT_ID,
		created_at: '2024-11-04T16:20:11.000Z',
		updated_at: '2025-02-18T17:02:45.000Z',
		deleted_at: null,
		...fields,
	};
}

function consultation(
	fields: Pick<
		ConsultationRecord,
		'id' | 'person_id' | 'encounter_id' | 'cause' | 'medical_instructions' | 'starts_at' | 'finished_at'
	> &
		Partial<ConsultationRecord>,
): ConsultationRecord {
	return {
		account_id: DEMO_ACCOUNT_ID,
		encode_id: `c${(fields.id * 7919).toString(36)}x${(fields.id * 104729).toString(36)}`,
		created_at: fields.starts_at,
		physical_examination: null,
		subjective_symptoms: null,
		cause_extended: null,
		treatment_plan: null,
		procedure: null,
		account_medical_instructions: null,
		partner_prescription_status: null,
		sis: {},
		lab_test: {},
		consultation_attributes: {},
		...fields,
	};
}

function emptyInvoice(
	fields: Pick<InvoiceRecord, 'id' | 'encounter_id' | 'person_id' | 'consultation_id' | 'cause' | 'starts_at'>,
): InvoiceRecord {
	return {
		payment_type: null,
		discount_rate: null,
		discount_amount: null,
		tax_rate: null,
		tax_amount: null,
		total_cents: 0,
		total_discount_cents: 0,
		total_tax_cents: 0,
		tax_attributes: {},
		signed_at: null,
		globally_invoiced: false,
		cfdi_uuid: null,
		...fields,
	};
}

export const SIGNED_TAX_ATTRIBUTES: Required<TaxAttributes> = {
	use_cfdi: 'S01',
	payment_form: '01',
	payment_method: 'PUE',
};

/** Products carry 16 % IVA; medical services are exempt. */
export const IVA_RATE = 0.16;

export function chargeAmounts(
	quantity: number,
	value: number,
	accountingType: string,
): { subtotal_cents: number; tax_cents: number; total_cents: number } {
	const subtotal = Math.round(quantity * value * 100);
	const tax = accountingType === 'product' ? Math.round(subtotal * IVA_RATE) : 0;
	return { subtotal_cents: subtotal, tax_cents: tax, total_cents: subtotal + tax };
}

export function chargesOf(store: Store, invoiceId: number): ChargeRecord[] {
	return store.charges.filter((charge) => charge.invoice_id === invoiceId);
}

export function recomputeInvoiceTotals(store: Store, invoice: InvoiceRecord): void {
	let subtotal = 0;
	let tax = 0;
	for (const charge of chargesOf(store, invoice.id)) {
		subtotal += charge.subtotal_cents;
		tax += charge.tax_cents;
	}
	invoice.total_tax_cents = tax;
	invoice.total_discount_cents = 0;
	invoice.total_cents = subtotal + tax;
}

export function addCharge(
	store: Store,
	fields: {
		invoice_id: number;
		quantity: number;
		value: number;
		accounting_type: string;
		account_id: number;
		invoice_item_id: number | null;
	},
	at = nowIso(),
): ChargeRecord {
	const catalogItem = fields.invoice_item_id ? store.invoiceItemCatalog.get(fields.invoice_item_id) : undefined;
	const charge: ChargeRecord = {
		id: store.nextId.charge++,
		...fields,
		description: catalogItem?.name ?? 'Cargo',
		...chargeAmounts(fields.quantity, fields.value, fields.accounting_type),
		created_at: at,
		updated_at: at,
	};
	store.charges.push(charge);
	const invoice = store.invoices.get(fields.invoice_id);
	if (invoice) recomputeInvoiceTotals(store, invoice);
	return charge;
}

export function signInvoice(invoice: InvoiceRecord, at = nowIso()): void {
	invoice.signed_at = at;
	invoice.tax_attributes = { ...SIGNED_TAX_ATTRIBUTES };
	invoice.payment_type = invoice.payment_type ?? 'cash';
	invoice.cfdi_uuid = randomUUID().toUpperCase();
}

export function createStore(): Store {
	const store: Store = {
		people: new Map(),
		consultations: new Map(),
		encounters: new Map(),
		invoices: new Map(),
		charges: [],
		prescriptionDrugs: [],
		states: new Map(),
		waitingRooms: [],
		invoiceItemLocations: [],
		customFormResponses: [],
		invoiceItemCatalog: new Map(),
		invoiceEmails: [],
		nextId: { person: 5, encounter: 5, invoice: 4, charge: 1, prescriptionDrug: 501 },
	};

	MEXICAN_STATES.forEach(([name, abbrv], index) => {
		store.states.set(index + 1, { id: index + 1, name, abbrv });
	});

	const people = [
		person({
			id: 1,
			first_name: 'María Fernanda',
			last_name: 'González López',
			email: 'maria.gonzalez@example.mx',
			born_at: '1988-04-12',
			gender: 'female',
			telephone2: '5512345678',
			address_state_id: 9,
			address_city: 'Ciudad de México',
			address_street: 'Av. Insurgentes Sur 1602, Col. Crédito Constructor',
			address_zipcode: '03940',
			identity_number: 'GOLM880412MDFNPR05',
			person_attributes: {
				send_reminders: true,
				insurance_name: 'GNP Seguros',
				insurance_number: 'GNP-7781-2290',
				insurance_plan: 'Gastos Médicos Mayores',
				insurance_type: 'private',
				insurance_taxed: false,
			},
		}),
		person({
			id: 2,
			first_name: 'José Luis',
			last_name: 'Hernández Martínez',
			email: 'jl.hernandez@example.mx',
			born_at: '1975-11-03',
			gender: 'male',
			telephone2: '3398765432',
			address_state_id: 14,
			address_city: 'Guadalajara',
			address_street: 'Av. Chapultepec 480, Col. Americana',
			address_zipcode: '44160',
		}),
		person({
			id: 3,
			first_name: 'Ana Sofía',
			last_name: 'Ramírez Torres',
			email: 'ana.ramirez@example.mx',
			born_at: '1995-07-21',
			gender: 'female',
			telephone2: '8187654321',
			address_state_id: 19,
			address_city: 'Monterrey',
			address_zipcode: '64000',
			person_attributes: { send_reminders: false },
		}),
		person({
			id: 4,
			first_name: 'Diego',
			last_name: 'González López',
			email: null,
			born_at: '2016-09-30',
			gender: 'male',
			telephone2: '5512345678',
			address_state_id: 9,
			notes: 'Hijo de María Fernanda González López',
		}),
	];
	for (const p of people) store.people.set(p.id, p);

	const consultations = [
		consultation({
			id: 1,
			person_id: 1,
			encounter_id: 1,
			cause: 'Control de hipertensión arterial',
			medical_instructions: 'Losartán 50 mg cada 24 horas. Dieta baja en sodio. Control en 30 días.',
			starts_at: '2025-03-10T15:30:00.000Z',
			finished_at: '2025-03-10T16:05:00.000Z',
			subjective_symptoms: 'Cefalea ocasional',
			treatment_plan: 'Continuar tratamiento antihipertensivo',
		}),
		consultation({
			id: 2,
			person_id: 2,
			encounter_id: 2,
			cause: 'Dolor lumbar',
			medical_instructions: 'Reposo relativo. Aplicar calor local.',
			starts_at: '2025-03-12T17:00:00.000Z',
			finished_at: null,
		}),
		consultation({
			id: 3,
			person_id: 3,
			encounter_id: 3,
			cause: 'Infección de vías respiratorias altas',
			medical_instructions: 'Paracetamol 500 mg cada 8 horas por 3 días. Abundantes líquidos.',
			starts_at: '2025-02-20T14:00:00.000Z',
			finished_at: '2025-02-20T14:25:00.000Z',
		}),
	];
	for (const c of consultations) store.consultations.set(c.id, c);

	const encounter = (
		id: number,
		personId: number,
		consultationId: number | null,
		invoiceId: number | null,
		physician: string,
		createdAt: string,
	): EncounterRecord => ({
		id,
		person_id: personId,
		consultation_id: consultationId,
		invoice_id: invoiceId,
		physician_name: physician,
		created_at: createdAt,
	});
	const medina = 'Dra. Laura Medina Ruiz';
	const solis = 'Dr. Ricardo Solís Vega';
	const encounters = [
		encounter(1, 1, 1, 1, medina, '2025-03-10T15:30:00.000Z'),
		encounter(2, 2, 2, 2, solis, '2025-03-12T17:00:00.000Z'),
		encounter(3, 3, 3, 3, medina, '2025-02-20T14:00:00.000Z'),
		encounter(4, 4, null, null, solis, '2025-03-14T18:00:00.000Z'), // no consultation, no invoice
	];
	for (const e of encounters) store.encounters.set(e.id, e);

	const catalog = [
		{ id: 1, name: 'Consulta de medicina general', value: 650, accounting_type: 'service' },
		{ id: 2, name: 'Consulta de especialidad', value: 950, accounting_type: 'service' },
		{ id: 3, name: 'Paracetamol 500 mg, caja con 10 tabletas', value: 45.5, accounting_type: 'product' },
		{ id: 4, name: 'Electrocardiograma', value: 480, accounting_type: 'service' },
	];
	for (const item of catalog) store.invoiceItemCatalog.set(item.id, item);

	for (const c of consultations) {
		store.invoices.set(
			c.id,
			emptyInvoice({
				id: c.id,
				encounter_id: c.encounter_id,
				person_id: c.person_id,
				consultation_id: c.id,
				cause: c.cause,
				starts_at: c.starts_at,
			}),
		);
	}
	const charge = (invoiceId: number, itemId: number, quantity: number, at: string) => {
		const item = catalog[itemId - 1];
		addCharge(
			store,
			{
				invoice_id: invoiceId,
				quantity,
				value: item.value,
				accounting_type: item.accounting_type,
				account_id: DEMO_ACCOUNT_ID,
				invoice_item_id: item.id,
			},
			at,
		);
	};
	// Invoice 1: unsigned, with charges. Invoice 2: unsigned, empty. Invoice 3: signed.
	charge(1, 1, 1, '2025-03-10T16:06:00.000Z');
	charge(1, 4, 1, '2025-03-10T16:07:00.000Z');
	charge(3, 1, 1, '2025-02-20T14:26:00.000Z');
	charge(3, 3, 2, '2025-02-20T14:27:00.000Z');
	const signed = store.invoices.get(3) as InvoiceRecord;
	signed.signed_at = '2025-02-20T14:30:00.000Z';
	signed.tax_attributes = { ...SIGNED_TAX_ATTRIBUTES };
	signed.payment_type = 'cash';
	signed.cfdi_uuid = '5FB2822E-396D-4725-8521-CDC4BDD20CCF';

	const schedule = (days: Record<string, string[]>) => ({
		schedule: {
			mon: [],
			tue: [],
			wed: [],
			thu: [],
			fri: [],
			sat: [],
			sun: [],
			...days,
			weeks_limit: { id: 1, time: 4, interval: 'weeks' },
			consultation_duration: 30,
		},
		timezone: 'America/Mexico_City',
	});
	store.waitingRooms.push(
		{
			id: 1,
			organization_id: ORGANIZATION_ID,
			name: 'Consulta general en línea',
			slug: 'consulta-general',
			schedule_configuration: schedule({
				mon: ['09:00-14:00', '16:00-19:00'],
				tue: ['09:00-14:00'],
				wed: ['09:00-14:00', '16:00-19:00'],
				thu: ['09:00-14:00'],
				fri: ['09:00-13:00'],
			}),
			waiting_room_configuration: { allow_guest: true },
			created_at: '2024-10-01T15:00:00.000Z',
			updated_at: '2025-01-15T18:30:00.000Z',
			selected_accounts: [DEMO_ACCOUNT_ID, 1202],
		},
		{
			id: 2,
			organization_id: ORGANIZATION_ID,
			name: 'Pediatría',
			slug: 'pediatria',
			schedule_configuration: schedule({ sat: ['10:00-14:00'] }),
			waiting_room_configuration: { allow_guest: false },
			created_at: '2024-10-01T15:05:00.000Z',
			updated_at: '2024-12-02T20:10:00.000Z',
			selected_accounts: [1202],
		},
	);

	const location = (id: number, name: string) => ({
		id,
		name,
		organization_id: ORGANIZATION_ID,
		created_at: '2024-10-01T15:00:00.000Z',
		updated_at: '2024-10-01T15:00:00.000Z',
	});
	store.invoiceItemLocations.push(
		location(1, 'Consultorio 101'),
		location(2, 'Farmacia'),
		location(3, 'Laboratorio clínico'),
	);

	store.customFormResponses.push(
		{
			id: 71,
			person_id: 1,
			custom_form_id: 5,
			custom_form_name: 'Historia clínica inicial',
			answers: [
				{ question: '¿Padece alguna alergia?', answer: 'Penicilina' },
				{ question: '¿Fuma?', answer: 'No' },
			],
			created_at: '2024-11-04T16:30:00.000Z',
			updated_at: '2024-11-04T16:30:00.000Z',
		},
		{
			id: 72,
			person_id: 1,
			custom_form_id: 6,
			custom_form_name: 'Consentimiento informado',
			answers: [{ question: 'Acepto el aviso de privacidad', answer: 'Sí' }],
			created_at: '2024-11-04T16:32:00.000Z',
			updated_at: '2024-11-04T16:32:00.000Z',
		},
		{
			id: 73,
			person_id: 2,
			custom_form_id: 5,
			custom_form_name: 'Historia clínica inicial',
			answers: [{ question: '¿Padece alguna alergia?', answer: 'Ninguna' }],
			created_at: '2025-01-09T17:00:00.000Z',
			updated_at: '2025-01-09T17:00:00.000Z',
		},
	);

	return store;
}

// ---- wire shapes -------------------------------------------------------------

export function fullName(p: PersonRecord): string {
	return `${p.first_name} ${p.last_name}`;
}

export function personJson(p: PersonRecord): Record<string, unknown> {
	const base = `${API}/people/${p.id}`;
	return {
		id: p.id,
		first_name: p.first_name,
		last_name: p.last_name,
		full_name: fullName(p),
		links: {
			consultations: `${base}/consultations`,
			consultation_lab_test_results: `${base}/consultation_lab_test_results`,
			consultation_schedules: `${base}/consultation_schedules`,
			vital_signs_sets: `${base}/vital_signs_sets`,
			medical_history: `${base}/medical_history`,
			deffers: `${base}/deffers`,
			medical_notes: `${base}/medical_notes`,
			insurance_coverage: `${base}/insurance_coverage`,
		},
		telephone: p.telephone,
		email: p.email,
		address_city: p.address_city,
		address_street: p.address_street,
		address_zipcode: p.address_zipcode,
		identity_number: p.identity_number,
		notes: p.notes,
		medical_record: p.medical_record,
		partner_patient_id: p.partner_patient_id,
		born_at: p.born_at,
		gender: p.gender,
		telephone2: p.telephone2,
		avatar_url_small: '/images/avatars/small/missing.png',
		avatar_url_medium: '/images/avatars/medium/missing.png',
		avatar_url_large: '/images/avatars/large/missing.png',
		address_state_id: p.address_state_id,
		account_id: p.account_id,
		phone_country_id: p.phone_country_id,
		person_attributes: { ...p.person_attributes },
		is_migrated: p.is_migrated,
		without_cellphone: p.without_cellphone,
		chat_invitation_sent: p.chat_invitation_sent,
	};
}

/** The patient-shaped event value of the spec. */
export function patientEventValue(p: PersonRecord): Record<string, unknown> {
	return {
		id: p.id,
		first_name: p.first_name,
		last_name: p.last_name,
		telephone: p.telephone,
		email: p.email,
		created_at: p.created_at,
		updated_at: p.updated_at,
		born_at: p.born_at,
		gender: p.gender,
		avatar_file_name: null,
		avatar_content_type: null,
		avatar_file_size: null,
		avatar_updated_at: null,
		telephone2: p.telephone2,
		person_attributes: { ...p.person_attributes },
		account_id: p.account_id,
		address_state_id: p.address_state_id,
		organization_id: p.organization_id,
		phone_country_id: p.phone_country_id,
		creator_id: p.creator_id,
		updater_id: p.updater_id,
		notes: p.notes,
		deleted_at: p.deleted_at,
		is_migrated: p.is_migrated,
		without_cellphone: p.without_cellphone,
		admission_form: p.admission_form,
		send_welcome_email: p.send_welcome_email,
		chat_invitation_date: p.chat_invitation_date,
		partner_patient_id: p.partner_patient_id,
		person_token_id: p.person_token_id,
		medical_record: p.medical_record,
	};
}

const CONSULTATION_LINKS = [
	'prescriptions',
	'physical_test_samples',
	'consultation_diagnostics',
	'consultation_procedures',
	'consultation_lab_tests',
	'consultation_lab_test_result',
	'consultation_prescription_drugs',
	'consultation_schedule',
	'disability_leave',
	'vital_signs_set',
	'odontogram',
	'medical_note',
	'physiotherapy_records',
	'medical_history_attachments',
	'location',
	'operating_room_requests',
];

export function consultationJson(c: ConsultationRecord): Record<string, unknown> {
	const base = `${API}/consultations/${c.id}`;
	const links: Record<string, string> = {
		person: `${API}/people/${c.person_id}`,
		encounter: `${API}/encounters/${c.encounter_id}`,
		invoice: `${API}/encounters/${c.encounter_id}/invoice`,
	};
	for (const name of CONSULTATION_LINKS) links[name] = `${base}/${name}`;
	return {
		id: c.id,
		account_id: c.account_id,
		encounter_id: c.encounter_id,
		cause: c.cause,
		medical_instructions: c.medical_instructions,
		encode_id: c.encode_id,
		created_at: c.created_at,
		starts_at: c.starts_at,
		finished_at: c.finished_at,
		physical_examination: c.physical_examination,
		subjective_symptoms: c.subjective_symptoms,
		cause_extended: c.cause_extended,
		treatment_plan: c.treatment_plan,
		procedure: c.procedure,
		account_medical_instructions: c.account_medical_instructions,
		partner_prescription_status: c.partner_prescription_status,
		sis: { ...c.sis },
		lab_test: { ...c.lab_test },
		consultation_attributes: { ...c.consultation_attributes },
		links,
	};
}

export function invoiceJson(i: InvoiceRecord): Record<string, unknown> {
	return {
		id: i.id,
		encounter_id: i.encounter_id,
		person_id: i.person_id,
		payment_type: i.payment_type,
		discount_rate: i.discount_rate,
		discount_amount: i.discount_amount,
		tax_rate: i.tax_rate,
		tax_amount: i.tax_amount,
		total_cents: i.total_cents,
		total_discount_cents: i.total_discount_cents,
		total_tax_cents: i.total_tax_cents,
		links: {
			consultation: i.consultation_id ? `${API}/consultations/${i.consultation_id}` : '',
			consultation_invoice_items: `${API}/invoices/${i.id}/consultation_invoice_items`,
			consultation_schedule: i.consultation_id
				? `${API}/consultations/${i.consultation_id}/consultation_schedule`
				: '',
			encounter: `${API}/encounters/${i.encounter_id}`,
		},
		tax_attributes: { ...i.tax_attributes },
		signed_at: i.signed_at,
		globally_invoiced: i.globally_invoiced,
		cause: i.cause,
		starts_at: i.starts_at,
	};
}

export function chargeJson(c: ChargeRecord): Record<string, unknown> {
	return { ...c };
}

export function prescriptionDrugJson(p: PrescriptionDrugRecord): Record<string, unknown> {
	return { ...p };
}

export function stateJson(s: StateRecord): Record<string, unknown> {
	return {
		id: s.id,
		name: s.name,
		abbrv: s.abbrv,
		links: { country: `${API}/countries/1`, counties: `${API}/states/${s.id}/counties` },
	};
}

/** What GET /__sim/state answers. */
export function storeSnapshot(store: Store): Record<string, unknown> {
	return {
		people: [...store.people.values()].map(personJson),
		consultations: [...store.consultations.values()].map(consultationJson),
		encounters: [...store.encounters.values()],
		invoices: [...store.invoices.values()].map((i) => ({ ...invoiceJson(i), cfdi_uuid: i.cfdi_uuid })),
		charges: store.charges,
		prescription_drugs: store.prescriptionDrugs,
		invoice_emails: store.invoiceEmails,
	};
}

/** Signed invoices in bulk (benchmarks download their CFDIs): encounter, invoice and one charge each. */
export function seedSignedInvoices(store: Store, count: number): number[] {
	const people = [...store.people.values()];
	const ids: number[] = [];
	const at = nowIso();
	for (let i = 0; i < count; i++) {
		const owner = people[i % people.length];
		const encounterId = store.nextId.encounter++;
		const invoiceId = store.nextId.invoice++;
		store.encounters.set(encounterId, {
			id: encounterId,
			person_id: owner.id,
			consultation_id: null,
			invoice_id: invoiceId,
			physician_name: 'Dra. Laura Medina Ruiz',
			created_at: at,
		});
		const invoice = emptyInvoice({
			id: invoiceId,
			encounter_id: encounterId,
			person_id: owner.id,
			consultation_id: null,
			cause: 'Consulta de seguimiento',
			starts_at: at,
		});
		store.invoices.set(invoiceId, invoice);
		const fields = {
			invoice_id: invoiceId,
			quantity: 1,
			value: 650,
			accounting_type: 'service',
			account_id: DEMO_ACCOUNT_ID,
			invoice_item_id: 1,
		};
		addCharge(store, fields, at);
		signInvoice(invoice, at);
		ids.push(invoiceId);
	}
	return ids;
}

/**
 * A consultation that finished just now, one per call (the demo's "finish a consultation"):
 * a new encounter, the consultation, and its unsigned invoice with a consultation charge,
 * for the first patient with an e-mail address, so that signing and e-mailing it both work.
 */
export function finishNewConsultation(store: Store, at = nowIso()): ConsultationRecord {
	const patient = [...store.people.values()].find((person) => person.email);
	if (!patient) throw new Error('No patient has an e-mail address');
	const id = Math.max(0, ...store.consultations.keys()) + 1;
	const encounterId = store.nextId.encounter++;
	const invoiceId = store.nextId.invoice++;
	const finished = consultation({
		id,
		person_id: patient.id,
		encounter_id: encounterId,
		cause: 'Consulta de seguimiento',
		medical_instructions: 'Control en 30 días.',
		starts_at: at,
		finished_at: at,
	});
	store.consultations.set(id, finished);
	store.encounters.set(encounterId, {
		id: encounterId,
		person_id: patient.id,
		consultation_id: id,
		invoice_id: invoiceId,
		physician_name: 'Dra. Laura Medina Ruiz',
		created_at: at,
	});
	store.invoices.set(
		invoiceId,
		emptyInvoice({ id: invoiceId, encounter_id: encounterId, person_id: patient.id, consultation_id: id, cause: finished.cause, starts_at: at }),
	);
	addCharge(store, { invoice_id: invoiceId, quantity: 1, value: 650, accounting_type: 'service', account_id: DEMO_ACCOUNT_ID, invoice_item_id: 1 }, at);
	return finished;
}
