/**
 * Checks before the trigger talks to the webhook service, each failing with a message that
 * names the fix: n8n shows only the message (not the description) in the toast of
 * "Listen for test event" and of activation.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IHookFunctions } from 'n8n-workflow';

import { ClinicClient } from '../shared/transport';
import type { IntegrationCredentialType } from '../shared/transport';
import { insecureWebhookAddressMessage, missingWebhookServiceUrlMessage } from '../shared/urls';
import { addressOf, isSecureUrl } from './subscriptions';

/** The credential has a webhook service address; without it nothing can be subscribed or removed. */
export async function requireWebhookService(ctx: IHookFunctions): Promise<void> {
	const authentication = ctx.getNodeParameter('authentication', 'clinicApi') as IntegrationCredentialType;
	const { webhookBaseUrl } = await new ClinicClient(ctx, authentication).integrationSettings();
	if (!webhookBaseUrl) {
		const { message, description } = missingWebhookServiceUrlMessage();
		throw new NodeOperationError(ctx.getNode(), message, { description });
	}
}

/** n8n's address for this trigger is https, or the user allowed http for a local test. */
export function requireAcceptedAddress(ctx: IHookFunctions): void {
	const webhookUrl = ctx.getNodeWebhookUrl('default') ?? '';
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	if (!webhookUrl || isSecureUrl(webhookUrl) || options.allowInsecureUrl === true) return;
	const { message, description } = insecureWebhookAddressMessage(addressOf(webhookUrl));
	throw new NodeOperationError(ctx.getNode(), message, { description });
}
