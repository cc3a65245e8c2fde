/**
 * What the Clinic Trigger says when subscribing or unsubscribing fails: which event, what
 * the service answered, and what was done about it. Secrets never reach these messages.
 */
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { INode, JsonObject } from 'n8n-workflow';

import type { CatalogEvent } from '../shared/catalog';
import { descriptionOf, httpCodeOf, messageOf } from '../shared/webhookSubscriptions';

/**
 * What n8n shows when activation fails. n8n 1.x shows only the description of a
 * NodeApiError (workflow.service.ts), which would hide which event failed and what the
 * service answered; a NodeOperationError's message is shown by 1.x and 2.x alike.
 */
export function activationError(node: INode, error: unknown): NodeOperationError {
	if (error instanceof NodeOperationError) return error;
	return new NodeOperationError(node, messageOf(error), { description: descriptionOf(error) || undefined });
}

/** `leftovers`: what could not be removed after the failure; undefined when nothing was to be removed (a resubscribe). */
export function subscribeError(node: INode, event: CatalogEvent, error: unknown, leftovers: string[] | undefined): NodeApiError {
	const message = `Could not subscribe to "${event.label}": ${messageOf(error)}`;
	const cleanup = !leftovers
		? ''
		: leftovers.length
			? `Subscription(s) ${leftovers.join(', ')} could not be removed; n8n will try again when the workflow is deactivated, or remove them with the Clinic node.`
			: 'The subscriptions made for this trigger were removed again, so it is not half-active.';
	const description = [descriptionOf(error), cleanup].filter(Boolean).join(' ');
	const httpCode = httpCodeOf(error) || undefined;
	return new NodeApiError(node, { message, description, ...(httpCode ? { httpCode } : {}) } as JsonObject, {
		message,
		description,
		httpCode,
	});
}

/** Deactivation could not remove every subscription: the first problem, and what happens next. */
export function removalError(node: INode, errors: unknown[]): NodeApiError {
	const first = errors[0];
	const message = `Could not remove every webhook subscription of this trigger: ${messageOf(first)}`;
	const description = `${errors.length} problem(s). ${descriptionOf(first)} The ones not removed stay recorded, and n8n tries again the next time the workflow is activated or deactivated.`.trim();
	return new NodeApiError(node, { message, description } as JsonObject, {
		message,
		description,
		httpCode: httpCodeOf(first) || undefined,
	});
}
