/**
 * Plumbing shared by both hosts: reading and parsing requests, the reply type the
 * handlers return, the error bodies the service uses, and writing answers.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

export interface Reply {
	status: number;
	/** Serialised as JSON with `content-type: application/json; charset=utf-8`. */
	json?: unknown;
	/** Sent as is; only the headers given are set. */
	raw?: Buffer;
	headers?: Record<string, string>;
}

/** Thrown by handlers to answer an error; `payload` is the JSON body. */
export class HttpError extends Error {
	constructor(
		readonly status: number,
		readonly payload: unknown,
		readonly headers: Record<string, string> = {},
	) {
		super(`HTTP ${status}`);
	}
}

export const ok = (json: unknown, status = 200): Reply => ({ status, json });
export const notFound = (message = 'Not found'): HttpError => new HttpError(404, { error: message });
export const unauthorized = (): HttpError => new HttpError(401, { error: 'Unauthorized' });
export const badRequest = (message: string): HttpError => new HttpError(400, { error: message });
export const invalid = (errors: Record<string, string[]>): HttpError => new HttpError(422, { errors });
export const unprocessable = (message: string): HttpError => new HttpError(422, { error: message });

export interface Call {
	method: string;
	/** Path without the query string, as sent (not decoded). */
	path: string;
	query: Record<string, string>;
	headers: IncomingHttpHeaders;
	raw: Buffer;
	/** Lower-case media type without parameters; '' when there is no content-type header. */
	mediaType: string;
	/** Body parsed as its content type says (JSON or form); undefined without a body or for other types. */
	body: unknown;
	/** The content type said JSON but the bytes were not. */
	bodyInvalid: boolean;
	/** Token of an `Authorization: Bearer` header. */
	bearer: string | undefined;
}

export function readRaw(req: IncomingMessage, limit: number): Promise<Buffer> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		req.on('data', (chunk: Buffer) => {
			size += chunk.length;
			if (size > limit) {
				reject(new HttpError(413, { error: 'Payload Too Large' }));
				req.resume();
				return;
			}
			chunks.push(chunk);
		});
		req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
		req.on('error', reject);
	});
}

export function isJsonType(mediaType: string): boolean {
	return mediaType === 'application/json' || mediaType.endsWith('+json');
}

export const FORM_TYPE = 'application/x-www-form-urlencoded';

export function parseForm(text: string): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [key, value] of new URLSearchParams(text)) out[key] = value;
	return out;
}

export function parseCall(req: IncomingMessage, raw: Buffer): Call {
	const url = req.url ?? '/';
	const q = url.indexOf('?');
	const path = q === -1 ? url : url.slice(0, q);
	const query = q === -1 ? {} : parseForm(url.slice(q + 1));
	const contentType = req.headers['content-type'];
	const mediaType = contentType ? contentType.split(';')[0].trim().toLowerCase() : '';
	let body: unknown;
	let bodyInvalid = false;
	if (raw.length > 0) {
		if (isJsonType(mediaType)) {
			try {
				body = JSON.parse(raw.toString('utf8'));
			} catch {
				bodyInvalid = true;
			}
		} else if (mediaType === FORM_TYPE) {
			body = parseForm(raw.toString('utf8'));
		}
	}
	const authorization = req.headers.authorization;
	const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
	return {
		method: (req.method ?? 'GET').toUpperCase(),
		path,
		query,
		headers: req.headers,
		raw,
		mediaType,
		body,
		bodyInvalid,
		bearer: match ? match[1] : undefined,
	};
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The JSON object body of an endpoint that takes JSON. No body (or a body of another
 * content type, which the service ignores) reads as {}; bytes that are not JSON, or
 * JSON that is not an object, answer 400.
 */
export function jsonBody(call: Call): Record<string, unknown> {
	if (call.bodyInvalid) throw badRequest('Invalid JSON in request body');
	if (call.body === undefined || !isJsonType(call.mediaType)) return {};
	if (!isPlainObject(call.body)) throw badRequest('Request body must be a JSON object');
	return call.body;
}

/** The body parsed however it can be, for the request log. */
export function bodyForLog(call: Call): unknown {
	if (call.body !== undefined) return call.body;
	if (call.raw.length === 0) return null;
	try {
		return JSON.parse(call.raw.toString('utf8'));
	} catch {
		return `<${call.raw.length} bytes of ${call.mediaType || 'unknown type'}>`;
	}
}

export function send(res: ServerResponse, reply: Reply): void {
	const headers: Record<string, string | number> = { ...reply.headers };
	let payload: Buffer | string = '';
	if (reply.raw !== undefined) {
		payload = reply.raw;
	} else if (reply.json !== undefined) {
		payload = JSON.stringify(reply.json);
		headers['content-type'] = 'application/json; charset=utf-8';
	}
	headers['content-length'] = Buffer.byteLength(payload);
	res.writeHead(reply.status, headers);
	res.end(payload);
}

export function errorReply(error: HttpError): Reply {
	return { status: error.status, json: error.payload, headers: error.headers };
}

// ---- small value checks shared by the handlers --------------------------------

/** An integer given as a number or a numeric string ("all shown as strings" in the spec). */
export function toInteger(value: unknown): number | undefined {
	if (typeof value === 'number' && Number.isInteger(value)) return value;
	if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) return Number.parseInt(value, 10);
	return undefined;
}

/** A finite number given as a number or a numeric string. */
export function toNumber(value: unknown): number | undefined {
	if (typeof value === 'number' && Number.isFinite(value)) return value;
	if (typeof value === 'string' && /^\s*-?(\d+(\.\d*)?|\.\d+)\s*$/.test(value)) return Number.parseFloat(value);
	return undefined;
}

/** A real calendar date written YYYY-MM-DD. */
export function isDate(value: unknown): value is string {
	if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
	const date = new Date(`${value}T00:00:00Z`);
	return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export function isEmail(value: unknown): value is string {
	return typeof value === 'string' && EMAIL.test(value);
}

// ---- routing -----------------------------------------------------------------

export interface Route<S> {
	method: string;
	pattern: RegExp;
	handler: (state: S, call: Call, params: string[]) => Reply | Promise<Reply>;
}

/**
 * Finds the route for a path (already stripped of any host prefix) and runs it.
 * Unknown paths, and known paths with another method, answer 404 as Rails does.
 */
export async function dispatch<S>(routes: Array<Route<S>>, state: S, call: Call, path: string): Promise<Reply> {
	const normalised = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
	for (const route of routes) {
		if (route.method !== call.method) continue;
		const match = route.pattern.exec(normalised);
		if (match) return await route.handler(state, call, match.slice(1));
	}
	throw notFound();
}
