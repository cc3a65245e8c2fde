/**
 * Output: Simplified / Raw / Selected Fields, for every record that carries clinical or
 * personal data (consultations, patients, custom form responses, invoices and billing
 * encounters, which repeat the consultation's cause and the patient's name, and events,
 * whose value is a patient or a consultation).
 *
 * - Simplified: the record's ids plus the fields that carry no clinical text and no
 *   contact details (dates, amounts, states). What a next step needs to find related records.
 * - Raw: the record as the service sends it.
 * - Selected Fields: the record's ids plus the fields the user picks.
 *
 * Ids are `id` and every field whose name ends in `_id`: they are how steps find each
 * other's records, and they say nothing about a patient by themselves.
 *
 * Node version 1 has no such choice (the Clinic node's Simplify, where it exists, keeps its
 * meaning there); from version 1.1 each of these operations and both triggers have it,
 * Simplified by default.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

export type OutputMode = 'simple' | 'raw' | 'fields';

/** The first node version with the Output choice. */
export const OUTPUT_CHOICE_VERSION = 1.1;

export interface RecordShape {
	/** The record in words, e.g. "consultation". */
	noun: string;
	/** Fields Simplified keeps besides the ids. */
	simple: readonly string[];
	/** What Simplified leaves out, in the option's description. */
	leftOut: string;
	/** The record's fields a user can pick under Selected Fields (ids are always kept). */
	fields: readonly string[];
}

const PERSON_FIELDS = [
	'address_city',
	'address_street',
	'address_zipcode',
	'born_at',
	'chat_invitation_sent',
	'email',
	'first_name',
	'full_name',
	'gender',
	'identity_number',
	'is_migrated',
	'last_name',
	'links',
	'medical_record',
	'notes',
	'person_attributes',
	'telephone',
	'telephone2',
	'without_cellphone',
];

export const SHAPES = {
	consultation: {
		noun: 'consultation',
		simple: ['created_at', 'starts_at', 'finished_at'],
		leftOut: 'cause, instructions, symptoms, examination, plan and links',
		fields: [
			'account_medical_instructions',
			'cause',
			'cause_extended',
			'consultation_attributes',
			'created_at',
			'finished_at',
			'lab_test',
			'links',
			'medical_instructions',
			'partner_prescription_status',
			'physical_examination',
			'procedure',
			'sis',
			'starts_at',
			'subjective_symptoms',
			'treatment_plan',
		],
	},
	invoice: {
		noun: 'invoice',
		simple: [
			'payment_type',
			'discount_rate',
			'discount_amount',
			'tax_rate',
			'tax_amount',
			'total_cents',
			'total_discount_cents',
			'total_tax_cents',
			'tax_attributes',
			'signed_at',
			'globally_invoiced',
			'starts_at',
		],
		leftOut: "the consultation's cause and the links",
		fields: [
			'cause',
			'discount_amount',
			'discount_rate',
			'globally_invoiced',
			'links',
			'payment_type',
			'signed_at',
			'starts_at',
			'tax_amount',
			'tax_attributes',
			'tax_rate',
			'total_cents',
			'total_discount_cents',
			'total_tax_cents',
		],
	},
	patient: {
		noun: 'patient',
		simple: ['medical_record'],
		leftOut: 'name, contact details, birth date, address, notes and insurance',
		fields: PERSON_FIELDS,
	},
	customFormResponse: {
		noun: 'form response',
		simple: ['custom_form_name', 'created_at', 'updated_at'],
		leftOut: 'the answers',
		fields: ['answers', 'created_at', 'custom_form_name', 'updated_at'],
	},
	billingEncounter: {
		noun: 'encounter',
		simple: [
			'total_discount_cents',
			'total_tax_cents',
			'total_cents',
			'charges_count',
			'subtotal',
			'payment',
			'created_at',
			'signed_at',
			'payment_type',
			'physician_name',
			'status',
		],
		leftOut: "the patient's name and the consultation's cause",
		fields: [
			'cause',
			'charges_count',
			'created_at',
			'full_name',
			'payment',
			'payment_type',
			'physician_name',
			'signed_at',
			'status',
			'subtotal',
			'total_cents',
			'total_discount_cents',
			'total_tax_cents',
		],
	},
} satisfies Record<string, RecordShape>;

/** True for the fields every output keeps: `id` and `*_id`. */
export function isIdField(name: string): boolean {
	return name === 'id' || name.endsWith('_id');
}

/** The picked field names, from a list or from text such as "email, first_name". */
export function pickedFields(value: unknown): string[] {
	const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [];
	return [...new Set(list.map((name) => String(name).trim()).filter((name) => name !== ''))];
}

/**
 * A record as the output choice wants it. Simplified keeps the ids and `simple`; Selected
 * Fields the ids and `picked`; Raw the record itself. A field the record lacks is left out;
 * empty (null) fields are left out of Simplified.
 */
export function shapeRecord(record: IDataObject, mode: OutputMode, picked: readonly string[], simple: readonly string[]): IDataObject {
	if (mode === 'raw' || !record || typeof record !== 'object' || Array.isArray(record)) return record;
	const keep = new Set(mode === 'fields' ? picked : simple);
	const shaped: IDataObject = {};
	for (const [name, value] of Object.entries(record)) {
		if (!isIdField(name) && !keep.has(name)) continue;
		if (mode === 'simple' && (value === null || value === undefined)) continue;
		shaped[name] = value;
	}
	return shaped;
}

/**
 * An event item (the triggers' items, Event > Get Many's events): everything about the
 * event stays; its `value` (a patient, a consultation, ...) is shaped like a record whose
 * Simplified form is its ids.
 */
export function shapeEventItem(json: IDataObject, mode: OutputMode, picked: readonly string[]): IDataObject {
	if (mode === 'raw') return json;
	const value = json.value;
	if (!value || typeof value !== 'object' || Array.isArray(value)) return json;
	return { ...json, value: shapeRecord(value as IDataObject, mode, picked, []) };
}

/** The mode and fields of an item, or undefined on a node version without the choice. */
export interface OutputChoice {
	mode: OutputMode;
	fields: string[];
}

interface ParameterReader {
	getNode(): { typeVersion: number };
	getNodeParameter(name: string, itemIndex: number, fallback?: unknown): unknown;
}

interface TriggerParameterReader {
	getNode(): { typeVersion: number };
	getNodeParameter(name: string, fallback?: unknown): unknown;
}

function modeOf(value: unknown): OutputMode {
	return value === 'raw' || value === 'fields' ? value : 'simple';
}

/** The Output choice of an action node item (undefined on version 1: the output stays as it was). */
export function readOutputChoice(ctx: ParameterReader, itemIndex: number): OutputChoice | undefined {
	if (ctx.getNode().typeVersion < OUTPUT_CHOICE_VERSION) return undefined;
	return {
		mode: modeOf(ctx.getNodeParameter('outputMode', itemIndex, 'simple')),
		fields: pickedFields(ctx.getNodeParameter('outputFields', itemIndex, [])),
	};
}

/** The Output choice of a trigger (undefined on version 1: items stay as they were). */
export function readTriggerOutputChoice(ctx: TriggerParameterReader): OutputChoice | undefined {
	if (ctx.getNode().typeVersion < OUTPUT_CHOICE_VERSION) return undefined;
	return {
		mode: modeOf(ctx.getNodeParameter('outputMode', 'simple')),
		fields: pickedFields(ctx.getNodeParameter('outputFields', '')),
	};
}

/** Applies a trigger's choice to its items; version 1 items pass unchanged. */
export function shapeTriggerItems(ctx: TriggerParameterReader, items: INodeExecutionData[]): INodeExecutionData[] {
	const choice = readTriggerOutputChoice(ctx);
	if (!choice) return items;
	return items.map((item) => ({ ...item, json: shapeEventItem(item.json, choice.mode, choice.fields) }));
}
