import { NodeApiError } from 'n8n-workflow';
import type { INode, JsonObject } from 'n8n-workflow';

import { networkFailureWords } from '../../credentials/ClinicNetwork';
import { splitServiceWords } from '../../credentials/ClinicTokenEndpoint';

/**
 * The service answers errors in three shapes: `{error}`, `{error, error_description}` and
 * `{errors: {field: [messages]}}`. This is the one place that reads them.
 */
export function serviceErrorText(body: unknown): string {
	let value = body;
	if (Buffer.isBuffer(value)) value = value.toString('utf8');
	if (typeof value === 'string') {
		try {
			value = JSON.parse(value);
		} catch {
			return '';
		}
	}
	if (!value || typeof value !== 'object') return '';
	const record = value as Record<string, unknown>;
	const parts: string[] = [];
	if (typeof record.error === 'string') parts.push(record.error);
	if (typeof record.error_description === 'string') parts.push(record.error_description);
	if (typeof record.message === 'string' && !parts.length) parts.push(record.message);
	if (record.errors && typeof record.errors === 'object') {
		for (const [field, messages] of Object.entries(record.errors as Record<string, unknown>)) {
			const list = Array.isArray(messages) ? messages.join(', ') : String(messages);
			parts.push(`${field} ${list}`);
		}
	}
	return parts.join(': ');
}

export interface ApiErrorContext {
	statusCode: number;
	body: unknown;
	/** What the request was about, for messages: "Invoice 42", "Consultation 7". */
	subject?: string;
	itemIndex?: number;
	/** Whether n8n signed in anew before this answer (the 401 retry). */
	afterSignIn?: boolean;
	/** A busy answer's (429, 503) Retry-After, and the most n8n waits in all per request. */
	retryAfterSeconds?: number;
	maxRetryWaitSeconds?: number;
}

function messageFor(context: ApiErrorContext): { message: string; description: string } {
	const { statusCode, body, subject, afterSignIn, retryAfterSeconds, maxRetryWaitSeconds } = context;
	const said = serviceErrorText(body);
	const detail = said ? `The service said: "${said}".` : '';
	if (retryAfterSeconds !== undefined && retryAfterSeconds > (maxRetryWaitSeconds ?? 0)) {
		return {
			message: `The clinic service is busy (${statusCode}) and asked n8n to wait ${retryAfterSeconds} s before trying again`,
			description: `n8n waits at most ${maxRetryWaitSeconds ?? 0} s in all per request, so nothing more was sent. Run it again later${statusCode === 429 ? ', or lower Parallel Requests' : ''}.`,
		};
	}
	if (statusCode === 404) {
		return {
			message: subject ? `${subject} was not found` : 'The clinic service answered 404 (not found)',
			description: `${detail} Check the id, and that it belongs to the account of this credential.`.trim(),
		};
	}
	if (statusCode === 401) {
		return {
			message: 'The clinic service refused the credentials (401)',
			description: afterSignIn
				? `${detail} n8n signed in again and was still refused: check the credential and that the account may use the API.`.trim()
				: `${detail} Check the credential.`.trim(),
		};
	}
	if (statusCode === 403) {
		return {
			message: 'The account is not allowed to do this (403)',
			description: `${detail} Ask the clinic's administrator for access.`.trim(),
		};
	}
	if (statusCode === 422 || statusCode === 400) {
		return {
			message: said ? `The clinic service refused the request: ${said}` : `The clinic service refused the request (${statusCode})`,
			// Read by people and, when the node is a tool, by a model: the reason above names what to fix.
			description: `${subject ?? 'The request'} was refused for the reason above. Do what it asks, or correct the value sent, then try again.`,
		};
	}
	if (statusCode === 429) {
		return {
			message: 'The clinic service is rate limiting requests (429)',
			description: `n8n waited and retried as the service asked (up to ${context.maxRetryWaitSeconds ?? 0} s in all), and it still refused. Lower Parallel Requests or try later.`,
		};
	}
	return {
		message: `The clinic service answered ${statusCode}${said ? `: ${said}` : ''}`,
		description: 'This is usually temporary on the service side. Try again later.',
	};
}

/**
 * Builds a fresh NodeApiError from a plain object: n8n hands an existing instance back
 * unchanged, and the original error may hold the request (with its token) in its context.
 */
export function apiError(node: INode, context: ApiErrorContext): NodeApiError {
	const { message, description } = messageFor(context);
	const said = serviceErrorText(context.body);
	return new NodeApiError(
		node,
		{ message, description, httpCode: String(context.statusCode), ...(said ? { error: said } : {}) } as JsonObject,
		{ message, description, httpCode: String(context.statusCode), itemIndex: context.itemIndex },
	);
}

/** A request that got no answer at all (refused connection, DNS, timeout), or a sign-in failure. */
export function transportError(
	node: INode,
	reason: string,
	host: string,
	itemIndex?: number,
	description = `Host: ${host}. Check the credential's base URLs and that the service is reachable from n8n.`,
): NodeApiError {
	const message = reason || `Could not reach the clinic service at ${host}`;
	return new NodeApiError(node, { message } as JsonObject, { message, description, itemIndex });
}

/**
 * The sign-in failed: the message is the credential's own, which names the fix. The
 * service's protocol words, when the credential kept them, go to the error's details.
 */
export function signInError(node: INode, reason: string, host: string, itemIndex?: number): NodeApiError {
	const { message, serviceWords } = splitServiceWords(reason);
	const description = `Signing in at ${host} failed. n8n tries to sign in once per execution, so nothing more was sent with this credential in this run.`;
	return new NodeApiError(
		node,
		{ message, description, ...(serviceWords ? { error: serviceWords } : {}) } as JsonObject,
		{ message, description, itemIndex },
	);
}


const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ECONNABORTED', 'ESOCKETTIMEDOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

export function isTimeout(code: string | undefined): boolean {
	return code !== undefined && TIMEOUT_CODES.has(code);
}

/**
 * The network code of a request that got no answer, wherever n8n put it: 2.x hands the
 * client's error on, 1.x wraps it (`httpCode`, `cause`, the legacy helper's `error`). A code the
 * words know is preferred to a generic one such as ERR_BAD_RESPONSE.
 */
export function networkCode(error: unknown): string | undefined {
	const codes: string[] = [];
	const seen = new Set<unknown>();
	const visit = (value: unknown, depth: number) => {
		if (!value || typeof value !== 'object' || seen.has(value) || depth > 6) return;
		seen.add(value);
		const record = value as Record<string, unknown>;
		if (typeof record.code === 'string') codes.push(record.code);
		// 1.x's NodeApiError keeps a network failure's code only as its httpCode.
		if (typeof record.httpCode === 'string' && /^[A-Z_]+$/.test(record.httpCode)) codes.push(record.httpCode);
		for (const key of ['cause', 'error', 'errorResponse', 'reason']) visit(record[key], depth + 1);
	};
	visit(error, 0);
	return codes.find((code) => isTimeout(code) || networkFailureWords(code) !== networkFailureWords(undefined)) ?? codes[0];
}

export interface NoAnswerContext {
	code: string | undefined;
	host: string;
	itemIndex: number;
	timeoutMs: number;
	/** What the user runs and what the request was about: "Invoice → Email", "Invoice 42". */
	operation?: string;
	subject?: string;
	/** The request changes something: it may have been made although no answer came. */
	write: boolean;
}

/** A request that got no answer: words for its code, never anything of the request itself. */
export function noAnswerError(node: INode, context: NoAnswerContext): NodeApiError {
	const { code, host, itemIndex, operation, subject, write } = context;
	const what = [operation, subject].filter(Boolean).join(': ');
	const timedOut = isTimeout(code);
	const message = timedOut
		? `The clinic service did not answer within ${context.timeoutMs / 1000} s`
		: `Could not reach the clinic service: ${networkFailureWords(code)}`;
	const fix = timedOut
		? 'The service may be overloaded: try again later, or raise Options → Timeout if it is always this slow.'
		: "Check the credential's base URLs and that the service is reachable from n8n.";
	const unknownOutcome = write ? ' The change may have been made although no answer came: check before running it again.' : '';
	return transportError(node, message, host, itemIndex, `${what ? `${what}. ` : ''}Host: ${host}. ${fix}${unknownOutcome}`);
}

