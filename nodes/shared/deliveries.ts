/**
 * What the trigger does with a delivery's bytes before a workflow runs: size and JSON
 * checks, unwrapping the payload, and remembering recent deliveries so a repeated one
 * starts nothing.
 */
import type { IDataObject } from 'n8n-workflow';

import { keepNewest } from '../../credentials/ClinicProcessMemory';

/** Default largest body accepted, in bytes (1 MiB). Clinic payloads are a few KiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export type ParsedBody =
	| { ok: true; body: IDataObject }
	| { ok: false; reason: 'empty' | 'tooLarge' | 'notJson' | 'notObject' };

/**
 * Reads a delivery body. Empty, larger than the limit, not JSON, or JSON that is not
 * an object: refused with the reason.
 */
export function parseDeliveryBody(raw: Buffer, maxBytes = DEFAULT_MAX_BODY_BYTES): ParsedBody {
	if (raw.length > maxBytes) return { ok: false, reason: 'tooLarge' };
	const text = raw.toString('utf8').trim();
	if (text === '') return { ok: false, reason: 'empty' };
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch {
		return { ok: false, reason: 'notJson' };
	}
	if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
		return { ok: false, reason: 'notObject' };
	}
	return { ok: true, body: parsed as IDataObject };
}

/** What a refused body reason means, for the answer to the service. */
export const BODY_PROBLEMS: Record<Exclude<ParsedBody, { ok: true }>['reason'], string> = {
	empty: 'Empty body: a JSON object was expected',
	tooLarge: 'Body too large',
	notJson: 'Body is not JSON',
	notObject: 'Body is JSON but not an object',
};

/**
 * The event's payload. The service wraps most payloads as `{"value": {...}}`; some
 * are top-level identifier objects. A body with a `value` key gives that value, any
 * other body is the payload itself.
 */
export function unwrapPayload(body: IDataObject): unknown {
	return Object.prototype.hasOwnProperty.call(body, 'value') ? body.value : body;
}

/**
 * A bounded memory of recently accepted deliveries, oldest forgotten first (a Map keeps
 * insertion order). `seen` checks and records in one synchronous step, so two copies
 * arriving at the same moment cannot both pass.
 */
export class RecentDeliveries {
	private readonly entries = new Map<string, number>();

	constructor(readonly capacity = 10_000) {}

	get size(): number {
		return this.entries.size;
	}

	/**
	 * True when the key was recorded less than `windowMs` ago (any time while still
	 * remembered, when `windowMs` is Infinity); records it otherwise.
	 */
	seen(key: string, windowMs: number, now = Date.now()): boolean {
		const at = this.entries.get(key);
		if (at !== undefined && now - at < windowMs) return true;
		keepNewest(this.entries, key, now, this.capacity);
		return false;
	}

	clear(): void {
		this.entries.clear();
	}
}

/** The Clinic Trigger's answer to a delivery it takes for a repeat: a 200, so the service stops retrying. */
export const REPEAT_ANSWER = { received: true, duplicate: true };

/** Whether an answer the service logged (its `response` text) is the trigger's repeat answer. */
export function answeredAsRepeat(response: string): boolean {
	try {
		return (JSON.parse(response) as { duplicate?: unknown }).duplicate === true;
	} catch {
		return false;
	}
}
