import { NodeConnectionTypes } from 'n8n-workflow';
import type { INodeType, INodeTypeDescription } from 'n8n-workflow';

import { integrationCredentials } from '../shared/authentication';
import { eventsSubtitle } from '../shared/catalogOptions';
import { eventOutputProperties } from '../shared/outputProperties';
import { triggerProperties } from './description';
import { receiveDelivery } from './receive';
import { webhookMethods } from './lifecycle';

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

	webhookMethods = webhookMethods;

	webhook = receiveDelivery;
}
