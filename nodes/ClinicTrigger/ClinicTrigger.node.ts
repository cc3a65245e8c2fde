import { NodeConnectionTypes } from 'n8n-workflow';
import type { IHookFunctions, INodeType, INodeTypeDescription, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { integrationCredentials } from '../shared/authentication';
import { eventsSubtitle } from '../shared/catalogOptions';
import { eventOutputProperties } from '../shared/outputProperties';
import { triggerProperties } from './description';
import { receiveDelivery } from './receive';
import { checkExists, create, deleteSubscriptions } from './lifecycle';
import { subscriptionError } from './subscriptions';

export class ClinicTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Clinic Trigger',
		name: 'clinicTrigger',
		icon: { light: 'file:clinic.svg', dark: 'file:clinic.dark.svg' },
		group: ['trigger'],
		// 1.1: the Output choice (Simplified by default); saved version 1 nodes output as before.
		version: [1, 1.1],
		defaultVersion: 1.1,
		subtitle: eventsSubtitle('events'),
		// n8n's nodes panel shows the Clinic node and this trigger as one app under this text.
		description: 'Work with patients, consultations, prescriptions, charges, CFDI invoices and telehealth waiting rooms of your clinic-management service, or start a workflow when it reports an event',
		defaults: { name: 'Clinic Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: integrationCredentials,
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				// Without it n8n answers an accepted delivery with the text "firstEntryJson".
				responseData: 'noData',
				path: 'webhook',
			},
		],
		properties: [...triggerProperties, ...eventOutputProperties()],
	};

	// A failed hook is a NodeOperationError (subscriptionError says why).
	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return await checkExists(this).catch((error: unknown) => {
					throw subscriptionError(this.getNode(), error);
				});
			},
			async create(this: IHookFunctions): Promise<boolean> {
				return await create(this).catch((error: unknown) => {
					throw subscriptionError(this.getNode(), error);
				});
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return await deleteSubscriptions(this).catch((error: unknown) => {
					throw subscriptionError(this.getNode(), error);
				});
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return await receiveDelivery.call(this);
	}
}
