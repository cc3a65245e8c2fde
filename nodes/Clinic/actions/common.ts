/** Parameter readers shared by the operations: each failure names the field and the item. */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

function itemLabel(itemIndex: number): string {
	return `item ${itemIndex + 1}`;
}

/**
 * A positive whole number id, from a number, a string or a resource locator (From List,
 * By ID, By URL); anything else stops before any request.
 */
export function readId(ctx: IExecuteFunctions, parameter: string, label: string, itemIndex: number): string {
	let raw: unknown;
	try {
		raw = ctx.getNodeParameter(parameter, itemIndex, undefined, { extractValue: true }) as unknown;
	} catch {
		// Only "By URL" can fail here: its link does not name a record of this kind.
		const given = ctx.getNodeParameter(parameter, itemIndex) as { value?: unknown };
		throw new NodeOperationError(
			ctx.getNode(),
			`${label} "${String(given?.value ?? '')}" in ${itemLabel(itemIndex)} is not a link to this kind of record`,
			{ itemIndex, description: `Paste a link from the record's links (it contains the id after the record's path), or switch "${label}" to By ID.` },
		);
	}
	if (raw && typeof raw === 'object' && 'value' in raw) raw = (raw as { value: unknown }).value;
	const text = typeof raw === 'number' ? String(raw) : String(raw ?? '').trim();
	if (!/^[1-9][0-9]*$/.test(text)) {
		throw new NodeOperationError(
			ctx.getNode(),
			`${label} must be a whole number such as 42, but in ${itemLabel(itemIndex)} it is "${text}"`,
			{ itemIndex, description: `Set the "${label}" field to the numeric id (an expression like {{ $json.id }} works too).` },
		);
	}
	return text;
}

/** Same rule for optional ids inside "Additional Fields". */
export function checkOptionalId(ctx: IExecuteFunctions, value: unknown, label: string, itemIndex: number): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	const text = String(value).trim();
	if (!/^[1-9][0-9]*$/.test(text)) {
		throw new NodeOperationError(ctx.getNode(), `${label} must be a whole number such as 42, but in ${itemLabel(itemIndex)} it is "${text}"`, { itemIndex });
	}
	return text;
}

/** A calendar date as YYYY-MM-DD, from a date picker value or typed text. */
export function toDate(ctx: IExecuteFunctions, value: unknown, label: string, itemIndex: number): string {
	const text = String(value ?? '').trim();
	const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
	const parsed = match ? new Date(Date.UTC(+match[1], +match[2] - 1, +match[3])) : undefined;
	if (!match || !parsed || parsed.getUTCMonth() !== +match[2] - 1 || parsed.getUTCDate() !== +match[3]) {
		throw new NodeOperationError(
			ctx.getNode(),
			`${label} must be a date (YYYY-MM-DD), but in ${itemLabel(itemIndex)} it is "${text}"`,
			{ itemIndex, description: `Pick a date or use an expression that gives e.g. 1985-04-23.` },
		);
	}
	return `${match[1]}-${match[2]}-${match[3]}`;
}

export function checkEmail(ctx: IExecuteFunctions, value: unknown, label: string, itemIndex: number): string {
	const text = String(value ?? '').trim();
	if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text)) {
		throw new NodeOperationError(ctx.getNode(), `${label} must be an e-mail address, but in ${itemLabel(itemIndex)} it is "${text}"`, { itemIndex });
	}
	return text;
}

/** A number given as number or numeric text, sent as text (the service's fields are strings). */
export function checkNumber(ctx: IExecuteFunctions, value: unknown, label: string, itemIndex: number): string {
	const text = String(value ?? '').trim();
	if (text === '' || !Number.isFinite(Number(text))) {
		throw new NodeOperationError(ctx.getNode(), `${label} must be a number, but in ${itemLabel(itemIndex)} it is "${text}"`, { itemIndex });
	}
	return text;
}

export function toItems(records: unknown): INodeExecutionData[] {
	const list = Array.isArray(records) ? records : [records];
	return list.map((record) => ({ json: (record ?? {}) as IDataObject }));
}

/** "Return All" and "Limit", as every n8n Get Many operation offers them. */
export const returnAllOrLimit: INodeProperties[] = [
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	},
];

/** Applies Return All / Limit to a list the service returns whole. */
export function limitRecords<T>(ctx: IExecuteFunctions, records: T[], itemIndex: number): T[] {
	const returnAll = ctx.getNodeParameter('returnAll', itemIndex, false) as boolean;
	if (returnAll) return records;
	const limit = ctx.getNodeParameter('limit', itemIndex, 50) as number;
	return records.slice(0, limit);
}

/** Unwraps `{key: value}` answers; an answer already unwrapped passes as it is. */
export function unwrap(ctx: IExecuteFunctions, body: unknown, key: string, itemIndex: number): IDataObject {
	if (body && typeof body === 'object' && key in (body as IDataObject)) {
		return (body as IDataObject)[key] as IDataObject;
	}
	if (body && typeof body === 'object') return body as IDataObject;
	throw new NodeOperationError(ctx.getNode(), `The clinic service answered without "${key}" data`, { itemIndex });
}
