/**
 * What the Clinic Trigger says when activating, subscribing or unsubscribing fails: what
 * failed, what the service answered, and what was done about it. Always a
 * NodeOperationError: n8n 1.x shows only the description of a NodeApiError at activation
 * (workflow.service.ts), which would hide which event failed. Secrets never reach these messages.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

import { descriptionOf, messageOf } from '../shared/webhookSubscriptions';

/** `failed` (what failed) leads the message; `after` (what was done about it) ends the description. */
export function subscriptionError(node: INode, error: unknown, failed?: string, after = ''): NodeOperationError {
	if (!failed && error instanceof NodeOperationError) return error;
	const message = failed ? `${failed}: ${messageOf(error)}` : messageOf(error);
	return new NodeOperationError(node, message, { description: [descriptionOf(error), after].filter(Boolean).join(' ') || undefined });
}
