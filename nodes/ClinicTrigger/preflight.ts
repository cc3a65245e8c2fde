/**
 * Checks before the trigger talks to the webhook service, each failing with a message that
 * names the fix: n8n shows only the message (not the description) in the toast of
 * "Listen for test event" and of activation.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IHookFunctions } from 'n8n-workflow';

import { clientFor } from '../shared/transport';
import { addressOf, insecureWebhookAddressMessage } from '../shared/urls';
import { acceptsAddress } from './lifecycle';

/**
 * The credential has a webhook service address; without it nothing can be subscribed or
 * removed. Asked before anything else so that deactivation says so plainly, not as a
 * failed removal; the transport owns the check and its words.
 */
export async function requireWebhookService(ctx: IHookFunctions): Promise<void> {
	await clientFor(ctx).webhookServiceUrl();
}

/** n8n's address for this trigger is https, or the user allowed http for a local test. */
export function requireAcceptedAddress(ctx: IHookFunctions): void {
	if (acceptsAddress(ctx)) return;
	const address = addressOf(ctx.getNodeWebhookUrl('default'));
	if (!address) {
		throw new NodeOperationError(ctx.getNode(), 'n8n gave this trigger no webhook address', {
			description: "Set n8n's WEBHOOK_URL to the public https:// address of this n8n and restart it.",
		});
	}
	const { message, description } = insecureWebhookAddressMessage(address);
	throw new NodeOperationError(ctx.getNode(), message, { description });
}
