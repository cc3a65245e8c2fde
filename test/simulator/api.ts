/**
 * The main API host. Everything lives under /api/v1; each endpoint takes the
 * authentication the spec gives it and nothing else:
 * - bearer integration token: every endpoint not listed below;
 * - none: POST /oauth/token, GET /waiting_rooms, GET /states/{id}, the portal's auth and validate;
 * - integration token in the query parameter (default `token`) only: the CFDI downloads;
 * - bearer portal token: GET /patient_portal/people.
 */
import type { User } from './auth';
import { cfdiPdf, cfdiXml } from './cfdi';
import type { SimState } from './core';
import {
	type Call,
	FORM_TYPE,
	HttpError,
	type Reply,
	type Route,
	badRequest,
	dispatch,
	invalid,
	isDate,
	isEmail,
	isJsonType,
	isPlainObject,
	jsonBody,
	notFound,
	ok,
	toInteger,
	toNumber,
	unauthorized,
	unprocessable,
} from './http';
import {
	type InvoiceRecord,
	type PersonRecord,
	type PrescriptionDrugRecord,
	addCharge,
	chargeJson,
	chargesOf,
	consultationJson,
	fullName,
	invoiceJson,
	nowIso,
	patientEventValue,
	personJson,
	prescriptionDrugJson,
	signInvoice,
	stateJson,
} from './store';

export const API_PREFIX = '/api/v1';

type Errors = Record<string, string[]>;

function addError(errors: Errors, field: string, message: string): void {
	(errors[field] ??= []).push(message);
}

function throwIfErrors(errors: Errors): void {
	if (Object.keys(errors).length > 0) throw invalid(errors);
}

// ---- authentication -------------------------------------------------------------

function integrationUser(state: SimState, call: Call): User {
	const user = state.auth.integrationUser(call.bearer);
	if (!user) throw unauthorized();
	return user;
}

// ---- POST /oauth/token ------------------------------------------------------------

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

const INVALID_GRANT =
	'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI ' +
	'used in the authorization request, or was issued to another client.';

function oauthError(status: number, error: string, description: string): HttpError {
	return new HttpError(status, { error, error_description: description }, NO_STORE);
}

function oauthToken(state: SimState, call: Call): Reply {
	if (call.bodyInvalid) throw oauthError(400, 'invalid_request', 'The request body is not valid JSON.');
	const params: Record<string, unknown> =
		(isJsonType(call.mediaType) || call.mediaType === FORM_TYPE) && isPlainObject(call.body) ? call.body : {};
	const grant = params.grant_type;
	if (grant === 'password') state.tokenCounts.password++;
	else if (grant === 'refresh_token') state.tokenCounts.refresh_token++;
	else state.tokenCounts.other++;

	if (grant === 'password') {
		for (const name of ['username', 'password']) {
			if (typeof params[name] !== 'string' || params[name] === '') {
				throw oauthError(400, 'invalid_request', `Missing required parameter: ${name}.`);
			}
		}
		const user = state.auth.users.get(params.username as string);
		if (!user || user.password !== params.password) {
			throw oauthError(
				401,
				'invalid_grant',
				INVALID_GRANT,
			);
		}
		if (user.twoFactor) {
			throw new HttpError(
				403,
				{
					token_type: '2fa',
					error: 'Two-factor verification is required for this account. Finish signing in in the web app.',
				},
				NO_STORE,
			);
		}
		return { status: 200, json: state.auth.issue(user.username), headers: NO_STORE };
	}
	if (grant === 'refresh_token') {
		if (typeof params.refresh_token !== 'string' || params.refresh_token === '') {
			throw oauthError(400, 'invalid_request', 'Missing required parameter: refresh_token.');
		}
		const tokens = state.auth.useRefreshToken(params.refresh_token);
		if (!tokens) {
			throw oauthError(
				400,
				'invalid_grant',
				INVALID_GRANT,
			);
		}
		return { status: 200, json: tokens, headers: NO_STORE };
	}
	throw oauthError(
		400,
		'unsupported_grant_type',
		'The authorization grant type is not supported by the authorization server.',
	);
}

// ---- people -----------------------------------------------------------------------

type FieldKind = 'name' | 'date' | 'string' | 'email' | 'integer' | 'attributes';

const PERSON_FIELDS: Record<string, FieldKind> = {
	first_name: 'name',
	last_name: 'name',
	born_at: 'date',
	gender: 'string',
	phone_country_id: 'integer',
	telephone2: 'string',
	email: 'email',
	account_id: 'integer',
	person_attributes: 'attributes',
};

type AttributeKind = 'boolean' | 'string' | 'date';

const PERSON_ATTRIBUTES: Record<string, AttributeKind> = {
	send_reminders: 'boolean',
	insurance_name: 'string',
	insurance_file: 'string',
	insurance_number: 'string',
	insurance_plan: 'string',
	insurance_type: 'string',
	insurance_taxed: 'boolean',
	insurance_claim_insured_name: 'string',
	insurance_claim_birthplace: 'string',
	insurance_claim_folio: 'string',
	insurance_claim_number: 'string',
	insurance_claim_movement: 'string',
	insurance_claim_adjuster: 'string',
	insurance_claim_risk: 'string',
	insurance_claim_institution_name: 'string',
	insurance_claim_institution_address: 'string',
	insurance_claim_sinister_date: 'date',
	insurance_claim_issue_date: 'date',
	insurance_claim_initial_date: 'date',
	insurance_claim_admission_date: 'date',
	insurance_claim_departure_date: 'date',
};

function toBoolean(value: unknown): boolean | undefined {
	if (typeof value === 'boolean') return value;
	if (value === 'true' || value === '1') return true;
	if (value === 'false' || value === '0') return false;
	return undefined;
}

/** The object under `key` of a JSON body; Rails answers 400 when it is missing or empty. */
function wrapped(call: Call, key: string): Record<string, unknown> {
	const body = jsonBody(call);
	const inner = body[key];
	if (!isPlainObject(inner) || Object.keys(inner).length === 0) {
		throw badRequest(`param is missing or the value is empty: ${key}`);
	}
	return inner;
}

function refuseUnknown(fields: Record<string, unknown>, known: readonly string[], errors: Errors, prefix = ''): void {
	for (const key of Object.keys(fields)) {
		if (!known.includes(key)) addError(errors, `${prefix}${key}`, 'is not a permitted attribute');
	}
}

function findPerson(state: SimState, id: string): PersonRecord {
	const person = state.store.people.get(Number(id));
	if (!person) throw notFound('Person not found');
	return person;
}

function updatePerson(state: SimState, call: Call, [id]: string[]): Reply {
	const user = integrationUser(state, call);
	const person = findPerson(state, id);
	const input = wrapped(call, 'person');
	const errors: Errors = {};
	refuseUnknown(input, Object.keys(PERSON_FIELDS), errors);
	const changes: Partial<PersonRecord> = {};
	let attributes: Record<string, unknown> | undefined;
	const today = new Date().toISOString().slice(0, 10);

	for (const [field, kind] of Object.entries(PERSON_FIELDS)) {
		if (!(field in input)) continue;
		const value = input[field];
		switch (kind) {
			case 'name':
				if (typeof value !== 'string') addError(errors, field, 'is invalid');
				else if (value.trim() === '') addError(errors, field, "can't be blank");
				else Object.assign(changes, { [field]: value.trim() });
				break;
			case 'string':
				if (typeof value !== 'string') addError(errors, field, 'is invalid');
				else Object.assign(changes, { [field]: value });
				break;
			case 'date':
				if (!isDate(value) || value > today) addError(errors, field, 'is invalid');
				else Object.assign(changes, { [field]: value });
				break;
			case 'email':
				if (value === null || value === '') changes.email = null;
				else if (!isEmail(value)) addError(errors, field, 'is invalid');
				else changes.email = value;
				break;
			case 'integer': {
				const number = toInteger(value);
				if (number === undefined || number < 1) addError(errors, field, 'is not a number');
				else Object.assign(changes, { [field]: number });
				break;
			}
			case 'attributes':
				if (!isPlainObject(value)) {
					addError(errors, field, 'is invalid');
					break;
				}
				attributes = {};
				for (const [key, raw] of Object.entries(value)) {
					const attributeKind = PERSON_ATTRIBUTES[key];
					const name = `person_attributes.${key}`;
					if (!attributeKind) {
						addError(errors, name, 'is not a permitted attribute');
					} else if (attributeKind === 'boolean') {
						const flag = toBoolean(raw);
						if (flag === undefined) addError(errors, name, 'is invalid');
						else attributes[key] = flag;
					} else if (raw === null || raw === '') {
						attributes[key] = null;
					} else if (attributeKind === 'date' ? !isDate(raw) : typeof raw !== 'string') {
						addError(errors, name, 'is invalid');
					} else {
						attributes[key] = raw;
					}
				}
				break;
		}
	}
	throwIfErrors(errors);

	Object.assign(person, changes);
	if (attributes) person.person_attributes = { ...person.person_attributes, ...attributes };
	person.updated_at = nowIso();
	person.updater_id = user.accountId;
	state.emit('patient', 'patient-updated', patientEventValue(person));
	return ok({ person: personJson(person) });
}

function customFormResponses(state: SimState, call: Call, [id]: string[]): Reply {
	integrationUser(state, call);
	const person = findPerson(state, id);
	return ok({
		custom_form_responses: state.store.customFormResponses.filter((r) => r.person_id === person.id),
	});
}

// ---- consultations and prescriptions ----------------------------------------------

function getConsultation(state: SimState, call: Call, [id]: string[]): Reply {
	integrationUser(state, call);
	const consultation = state.store.consultations.get(Number(id));
	if (!consultation) throw notFound('Consultation not found');
	return ok({ consultation: consultationJson(consultation) });
}

/** An optional integer id field: absent or null -> null; otherwise must be a positive integer. */
function optionalId(input: Record<string, unknown>, field: string, errors: Errors): number | null {
	const value = input[field];
	if (value === undefined || value === null || value === '') return null;
	const id = toInteger(value);
	if (id === undefined || id < 1) {
		addError(errors, field, 'is not a number');
		return null;
	}
	return id;
}

function optionalText(input: Record<string, unknown>, field: string, errors: Errors): string | null {
	const value = input[field];
	if (value === undefined || value === null) return null;
	if (typeof value === 'number') return String(value);
	if (typeof value !== 'string') {
		addError(errors, field, 'is invalid');
		return null;
	}
	return value;
}

const PRESCRIPTION_FIELDS = [
	'dose',
	'frequency',
	'duration',
	'consultation_id',
	'prescription_drug_id',
	'prescription_id',
	'account_id',
];

function createPrescriptionDrug(state: SimState, call: Call): Reply {
	const user = integrationUser(state, call);
	const input = wrapped(call, 'consultation_prescription_drug');
	const errors: Errors = {};
	refuseUnknown(input, PRESCRIPTION_FIELDS, errors);
	const consultationId = optionalId(input, 'consultation_id', errors);
	const consultation = consultationId === null ? undefined : state.store.consultations.get(consultationId);
	if (!consultation) addError(errors, 'consultation', 'must exist');
	const record = {
		dose: optionalText(input, 'dose', errors),
		frequency: optionalText(input, 'frequency', errors),
		duration: optionalText(input, 'duration', errors),
		prescription_drug_id: optionalId(input, 'prescription_drug_id', errors),
		prescription_id: optionalId(input, 'prescription_id', errors),
		account_id: optionalId(input, 'account_id', errors),
	};
	throwIfErrors(errors);
	const at = nowIso();
	const drug: PrescriptionDrugRecord = {
		id: state.store.nextId.prescriptionDrug++,
		...record,
		consultation_id: consultationId as number,
		account_id: record.account_id ?? consultation?.account_id ?? user.accountId,
		created_at: at,
		updated_at: at,
	};
	state.store.prescriptionDrugs.push(drug);
	state.emit('prescription', 'prescription-created', prescriptionDrugJson(drug));
	return ok({ consultation_prescription_drug: prescriptionDrugJson(drug) }, 201);
}

// ---- charges and invoices -----------------------------------------------------------

const CHARGE_FIELDS = ['quantity', 'value', 'accounting_type', 'account_id', 'invoice_id', 'invoice_item_id'];

function createCharge(state: SimState, call: Call): Reply {
	const user = integrationUser(state, call);
	const input = wrapped(call, 'consultation_invoice_item');
	const errors: Errors = {};
	refuseUnknown(input, CHARGE_FIELDS, errors);
	const invoiceId = optionalId(input, 'invoice_id', errors);
	const invoice = invoiceId === null ? undefined : state.store.invoices.get(invoiceId);
	if (!invoice) addError(errors, 'invoice', 'must exist');
	const quantity = toNumber(input.quantity);
	if (quantity === undefined) addError(errors, 'quantity', 'is not a number');
	else if (quantity <= 0) addError(errors, 'quantity', 'must be greater than 0');
	const value = toNumber(input.value);
	if (value === undefined) addError(errors, 'value', 'is not a number');
	else if (value < 0) addError(errors, 'value', 'must be greater than or equal to 0');
	let accountingType = 'service';
	if (input.accounting_type !== undefined && input.accounting_type !== null) {
		if (typeof input.accounting_type !== 'string' || input.accounting_type.trim() === '') {
			addError(errors, 'accounting_type', 'is invalid');
		} else {
			accountingType = input.accounting_type;
		}
	}
	const accountId = optionalId(input, 'account_id', errors);
	const invoiceItemId = optionalId(input, 'invoice_item_id', errors);
	throwIfErrors(errors);
	const target = invoice as InvoiceRecord;
	if (target.signed_at) throw unprocessable('Invoice is already signed');
	const charge = addCharge(state.store, {
		invoice_id: target.id,
		quantity: quantity as number,
		value: value as number,
		accounting_type: accountingType,
		account_id: accountId ?? user.accountId,
		invoice_item_id: invoiceItemId,
	});
	state.emit('invoice-item', 'invoice-item-created', chargeJson(charge));
	return ok({ consultation_invoice_item: chargeJson(charge) }, 201);
}

function findInvoice(state: SimState, id: string): InvoiceRecord {
	const invoice = state.store.invoices.get(Number(id));
	if (!invoice) throw notFound('Invoice not found');
	return invoice;
}

function encounterInvoice(state: SimState, call: Call, [id]: string[]): Reply {
	integrationUser(state, call);
	const encounter = state.store.encounters.get(Number(id));
	if (!encounter) throw notFound('Encounter not found');
	const invoice = encounter.invoice_id === null ? undefined : state.store.invoices.get(encounter.invoice_id);
	if (!invoice) throw notFound('Invoice not found');
	return ok({ invoice: invoiceJson(invoice) });
}

function sign(state: SimState, call: Call, [id]: string[]): Reply {
	integrationUser(state, call);
	const invoice = findInvoice(state, id);
	if (invoice.signed_at) throw unprocessable('Invoice is already signed');
	if (chargesOf(state.store, invoice.id).length === 0) throw unprocessable('Invoice has no charges to sign');
	signInvoice(invoice);
	state.emit('invoice', 'invoice-updated', invoiceJson(invoice));
	return ok({ invoice: invoiceJson(invoice) });
}

function emailInvoice(state: SimState, call: Call, [id]: string[]): Reply {
	integrationUser(state, call);
	const invoice = findInvoice(state, id);
	if (!invoice.signed_at) throw unprocessable('Invoice is not signed; sign it before e-mailing it');
	const person = state.store.people.get(invoice.person_id);
	if (!person?.email) throw unprocessable('The patient has no e-mail address');
	state.store.invoiceEmails.push({ invoice_id: invoice.id, to: person.email, sent_at: nowIso() });
	return ok({ invoice: invoiceJson(invoice) });
}

function downloadCfdi(state: SimState, call: Call, [id, format]: string[]): Reply {
	// The query token only: a bearer header is not how these endpoints authenticate.
	if (!state.auth.integrationUser(call.query[state.options.cfdiTokenParam])) throw unauthorized();
	const invoice = findInvoice(state, id);
	if (!invoice.signed_at) throw unprocessable('Invoice is not signed; it has no CFDI yet');
	const person = state.store.people.get(invoice.person_id);
	const charges = chargesOf(state.store, invoice.id);
	if (format === 'pdf') {
		return {
			status: 200,
			raw: cfdiPdf(invoice, person, charges),
			headers: {
				'content-type': 'application/pdf',
				'content-disposition': `attachment; filename="${invoice.id}.pdf"`,
			},
		};
	}
	// Field notes: the XML answer documents no content type; send none.
	return {
		status: 200,
		raw: cfdiXml(invoice, person, charges),
		headers: { 'content-disposition': `attachment; filename="${invoice.id}.xml"` },
	};
}

function invoiceItemLocations(state: SimState, call: Call): Reply {
	integrationUser(state, call);
	return ok({ invoice_item_locations: state.store.invoiceItemLocations });
}

// ---- billing report ------------------------------------------------------------------

const REPORT_STATUSES = ['signed', 'unsigned'];

function billingReport(state: SimState, call: Call): Reply {
	integrationUser(state, call);
	const { start, end, status, person } = call.query;
	const errors: Errors = {};
	if (start !== undefined && start !== '' && !isDate(start)) addError(errors, 'start', 'is invalid');
	if (end !== undefined && end !== '' && !isDate(end)) addError(errors, 'end', 'is invalid');
	if (start && end && isDate(start) && isDate(end) && start > end) {
		addError(errors, 'end', 'must be on or after start');
	}
	if (status && !REPORT_STATUSES.includes(status)) {
		addError(errors, 'status', `is not included in the list (${REPORT_STATUSES.join(', ')})`);
	}
	throwIfErrors(errors);
	const personId = person ? toInteger(person) : undefined;

	const encounters: Array<Record<string, unknown>> = [];
	let totalCents = 0;
	let paidCount = 0;
	let paidCents = 0;
	for (const encounter of state.store.encounters.values()) {
		if (encounter.invoice_id === null) continue;
		const invoice = state.store.invoices.get(encounter.invoice_id);
		if (!invoice) continue;
		const day = encounter.created_at.slice(0, 10);
		if (start && day < start) continue;
		if (end && day > end) continue;
		const invoiceStatus = invoice.signed_at ? 'signed' : 'unsigned';
		if (status && status !== invoiceStatus) continue;
		const owner = state.store.people.get(invoice.person_id);
		if (person) {
			const matches =
				personId !== undefined
					? invoice.person_id === personId
					: !!owner && fullName(owner).toLowerCase().includes(person.toLowerCase());
			if (!matches) continue;
		}
		const charges = chargesOf(state.store, invoice.id);
		const payment = invoice.signed_at ? invoice.total_cents : 0;
		totalCents += invoice.total_cents;
		if (payment > 0) {
			paidCount++;
			paidCents += payment;
		}
		encounters.push({
			id: encounter.id,
			invoice_id: invoice.id,
			total_discount_cents: invoice.total_discount_cents,
			total_tax_cents: invoice.total_tax_cents,
			total_cents: invoice.total_cents,
			charges_count: charges.length,
			subtotal: charges.reduce((sum, c) => sum + c.subtotal_cents, 0),
			payment,
			created_at: encounter.created_at,
			signed_at: invoice.signed_at,
			cause: invoice.cause,
			full_name: owner ? fullName(owner) : '',
			payment_type: invoice.payment_type ?? '',
			physician_name: encounter.physician_name,
			status: invoiceStatus,
		});
	}
	return ok({
		encounters,
		invoice_metrics: [
			{
				id: null,
				total_cents: totalCents,
				total_items: encounters.length,
				total_items_payments: paidCount,
				average: encounters.length ? Math.round(totalCents / encounters.length) : 0,
				total_payments: (paidCents / 100).toFixed(2),
			},
		],
	});
}

// ---- public lookups -----------------------------------------------------------------

function waitingRooms(state: SimState): Reply {
	return ok({ waiting_rooms: state.store.waitingRooms });
}

function getState(state: SimState, _call: Call, [id]: string[]): Reply {
	const found = state.store.states.get(Number(id));
	if (!found) throw notFound('State not found');
	return ok({ state: stateJson(found) });
}

// ---- patient portal -------------------------------------------------------------------

function digits(input: Record<string, unknown>, field: string, errors: Errors): string {
	const value = input[field];
	const text = typeof value === 'number' ? String(value) : value;
	if (typeof text !== 'string' || text.trim() === '') {
		addError(errors, field, "can't be blank");
		return '';
	}
	if (!/^\+?\d+$/.test(text.trim())) {
		addError(errors, field, 'is invalid');
		return '';
	}
	return text.trim().replace(/^\+/, '');
}

function portalAuth(state: SimState, call: Call): Reply {
	const input = jsonBody(call);
	const errors: Errors = {};
	const countryCode = digits(input, 'country_code', errors);
	const phone = digits(input, 'phone', errors);
	throwIfErrors(errors);
	state.auth.requestPortalCode(countryCode, phone);
	// The same answer whether or not the phone is known.
	return ok({ message: 'If the phone number is registered, a verification code was sent by SMS.' });
}

function portalValidate(state: SimState, call: Call): Reply {
	const input = jsonBody(call);
	const errors: Errors = {};
	const countryCode = digits(input, 'country_code', errors);
	const phone = digits(input, 'phone', errors);
	const code = digits(input, 'code', errors);
	throwIfErrors(errors);
	const token = state.auth.validatePortalCode(countryCode, phone, code);
	if (!token) throw new HttpError(401, { error: 'Invalid or expired verification code' });
	return ok({ token });
}

function portalPeople(state: SimState, call: Call): Reply {
	const session = state.auth.portalSession(call.bearer);
	if (!session) throw unauthorized();
	const people = [...state.store.people.values()].filter((p) => p.telephone2 === session.phone);
	return ok({ people: people.map(personJson) });
}

// ---- routing ----------------------------------------------------------------------------

const ID = '(\\d+)';

const routes: Array<Route<SimState>> = [
	{ method: 'POST', pattern: /^\/oauth\/token$/, handler: oauthToken },
	{ method: 'PUT', pattern: new RegExp(`^/people/${ID}$`), handler: updatePerson },
	{ method: 'GET', pattern: new RegExp(`^/people/${ID}/custom_form_response$`), handler: customFormResponses },
	{ method: 'GET', pattern: new RegExp(`^/consultations/${ID}$`), handler: getConsultation },
	{ method: 'POST', pattern: /^\/consultation_prescription_drugs$/, handler: createPrescriptionDrug },
	{ method: 'POST', pattern: /^\/consultation_invoice_items$/, handler: createCharge },
	{ method: 'GET', pattern: new RegExp(`^/encounters/${ID}/invoice$`), handler: encounterInvoice },
	{ method: 'POST', pattern: new RegExp(`^/invoices/${ID}/sign$`), handler: sign },
	{ method: 'POST', pattern: new RegExp(`^/invoices/${ID}/email_invoice$`), handler: emailInvoice },
	{ method: 'GET', pattern: new RegExp(`^/invoices/${ID}/download_cfdi\\.(pdf|xml)$`), handler: downloadCfdi },
	{ method: 'GET', pattern: /^\/invoice_item_locations$/, handler: invoiceItemLocations },
	{ method: 'GET', pattern: /^\/reports\/consultation_invoice_items$/, handler: billingReport },
	{ method: 'GET', pattern: /^\/waiting_rooms$/, handler: waitingRooms },
	{ method: 'GET', pattern: new RegExp(`^/states/${ID}$`), handler: getState },
	{ method: 'POST', pattern: /^\/patient_portal\/auth$/, handler: portalAuth },
	{ method: 'POST', pattern: /^\/patient_portal\/validate$/, handler: portalValidate },
	{ method: 'GET', pattern: /^\/patient_portal\/people$/, handler: portalPeople },
];

export async function handleApi(state: SimState, call: Call): Promise<Reply> {
	if (!call.path.startsWith(`${API_PREFIX}/`)) throw notFound();
	return await dispatch(routes, state, call, call.path.slice(API_PREFIX.length));
}
