/**
 * The Output choice (Simplified / Raw / Selected Fields, ../../shared/output.ts) applied to
 * an operation's records. On node version 1 the records pass as that version gave them.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { RecordShape } from '../../shared/output';
import { readOutputChoice, shapeEventItem, shapeRecord, SHAPES } from '../../shared/output';
import { toItems } from './common';
import { idFromLink, simplifyConsultation } from './simplify';

type Prepare = (record: IDataObject) => IDataObject;

/** Ids that only a link names, added before shaping so Simplified and Selected Fields keep them. */
const PREPARE = new Map<RecordShape, Prepare>([
	[SHAPES.consultation, simplifyConsultation],
	[
		SHAPES.invoice,
		(invoice) => {
			const consultationId = idFromLink((invoice.links as IDataObject | undefined)?.consultation, 'consultations');
			return consultationId ? { ...invoice, consultation_id: consultationId } : invoice;
		},
	],
]);

function isRecord(value: unknown): value is IDataObject {
	return !!value && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Output items for `records` (one record or a list) of kind `shape`, as the item's Output
 * choice says; `legacy` gives version 1's record (unchanged unless given).
 */
export function recordItems(
	ctx: IExecuteFunctions,
	itemIndex: number,
	shape: RecordShape,
	records: unknown,
	legacy: Prepare = (record) => record,
): INodeExecutionData[] {
	const choice = readOutputChoice(ctx, itemIndex);
	const list = Array.isArray(records) ? (records as unknown[]) : [records];
	return toItems(
		list.map((record) => {
			if (!isRecord(record)) return record;
			if (!choice) return legacy(record);
			if (choice.mode === 'raw') return record;
			const prepare = PREPARE.get(shape) ?? ((r: IDataObject) => r);
			return shapeRecord(prepare(record), choice.mode, choice.fields, shape.simple);
		}),
	);
}

/** An Event > Get Many event as the item's Output choice says (version 1: `legacy`). */
export function eventRecord(
	ctx: IExecuteFunctions,
	itemIndex: number,
	event: IDataObject,
	simplified: Prepare,
	legacy: Prepare,
): IDataObject {
	const choice = readOutputChoice(ctx, itemIndex);
	if (!choice) return legacy(event);
	if (choice.mode === 'raw') return event;
	return shapeEventItem(simplified(event), choice.mode, choice.fields);
}
