/**
 * Helpers several resources share beyond the parameter readers of common.ts: answers
 * that are lists, the topic prefix, secrets kept out of output, and API errors that an
 * operation words more precisely than the transport can.
 */
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, JsonObject } from 'n8n-workflow';

import { describeTopicPrefixProblem } from '../../shared/catalog';
import type { ClinicClient } from '../../shared/transport';

/** The outcome of a request, so an operation can look at a failure before it rethrows it. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: Error };

export async function settle<T>(pending: Promise<T>): Promise<Settled<T>> {
	return await pending.then(
		(value): Settled<T> => ({ ok: true, value }),
		(error: Error): Settled<T> => ({ ok: false, error }),
	);
}

/** True when the error is the service's answer with this HTTP status. */
export function isHttpStatus(error: Error, status: number): error is NodeApiError {
	return error instanceof NodeApiError && String(error.httpCode) === String(status);
}

/** A fresh NodeApiError with our own words; nothing of the original request travels with it. */
export function apiFailure(
	ctx: IExecuteFunctions,
	details: { message: string; description?: string; httpCode?: string | null; itemIndex: number },
): NodeApiError {
	const { message, description, itemIndex } = details;
	const httpCode = details.httpCode ?? undefined;
	return new NodeApiError(
		ctx.getNode(),
		{ message, ...(description ? { description } : {}), ...(httpCode ? { httpCode } : {}) } as JsonObject,
		{ message, description, httpCode, itemIndex },
	);
}

/**
 * The records of a list answer: `{key: [...]}` or a bare array. Anything else is a
 * change of the service's format, said plainly rather than output as one odd item.
 */
export function recordsOf(ctx: IExecuteFunctions, body: unknown, key: string, itemIndex: number): IDataObject[] {
	if (Array.isArray(body)) return body as IDataObject[];
	if (body && typeof body === 'object' && Array.isArray((body as IDataObject)[key])) {
		return (body as IDataObject)[key] as IDataObject[];
	}
	throw new NodeOperationError(ctx.getNode(), `The clinic service answered without a list of "${key}"`, {
		itemIndex,
		description: 'Expected an array, or an object holding the array under that key.',
	});
}

/** The topic prefix of the integration credential, e.g. `clinic-38729`; without it no topic is complete. */
export async function requireTopicPrefix(ctx: IExecuteFunctions, client: ClinicClient, itemIndex: number): Promise<string> {
	const { topicPrefix } = await client.integrationSettings(itemIndex);
	const problem = describeTopicPrefixProblem(topicPrefix);
	if (problem) {
		throw new NodeOperationError(ctx.getNode(), problem, {
			itemIndex,
			description:
				'Fix "Topic Prefix" in the Clinic credential: the prefix your service assigned (it looks like clinic-38729). Topics are that prefix plus a suffix such as .patient.',
		});
	}
	return topicPrefix;
}

/**
 * The values a user actually set: entries left empty (an expression that resolved to
 * nothing, a field added and left blank) are not sent.
 */
export function isSet(value: unknown): boolean {
	return value !== undefined && value !== null && !(typeof value === 'string' && value.trim() === '');
}

/** An https URL, or http when the user allows it; the message names the field and item. */
export function checkCallbackUrl(
	ctx: IExecuteFunctions,
	value: unknown,
	label: string,
	allowInsecure: boolean,
	itemIndex: number,
): string {
	const text = String(value ?? '').trim();
	let parsed: URL | undefined;
	try {
		parsed = new URL(text);
	} catch {
		parsed = undefined;
	}
	const allowed = allowInsecure ? ['https:', 'http:'] : ['https:'];
	if (!parsed || !allowed.includes(parsed.protocol)) {
		throw new NodeOperationError(
			ctx.getNode(),
			`${label} must be an https:// address, but in item ${itemIndex + 1} it is "${text}"`,
			{
				itemIndex,
				description: allowInsecure
					? 'Enter a full address starting with https:// or http://.'
					: 'The service delivers events only to https:// addresses. For a local test server, turn on "Allow Insecure URL".',
			},
		);
	}
	return text;
}
