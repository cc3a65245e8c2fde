import { randomBytes } from 'crypto';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { findEvent, fullTopic } from '../../../shared/catalog';
import type { ClinicClient } from '../../../shared/transport';
import { toItems, unwrap } from '../common';
import { WebhookSubscriptions, withoutSecret } from '../../../shared/webhookSubscriptions';
import { checkCallbackUrl, requireTopicPrefix } from '../shared';
import { eventOptions } from '../../../shared/catalogOptions';

const properties: INodeProperties[] = [
	{
		displayName: 'Callback URL',
		name: 'url',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'https://n8n.example.com/webhook/clinic',
		description:
			'HTTPS address the service will POST each event to, e.g. the Production URL of a Webhook node. To receive events in a workflow, the Clinic Trigger node subscribes and unsubscribes by itself.',
	},
	{
		displayName: 'Event',
		name: 'event',
		type: 'options',
		required: true,
		default: 'consultation:consultation-finished',
		options: eventOptions,
		description:
			'Event to subscribe to. The topic sent is the Topic Prefix of the credential plus the suffix shown, e.g. clinic-38729.consultation.',
	},
	{
		displayName: 'Secret',
		name: 'secret',
		type: 'string',
		typeOptions: { password: true },
		default: '',
		description:
			'Shared secret the service keeps with the subscription and uses to sign each delivery. Leave empty to have n8n generate a strong random one: it is then returned once, as secret in this operation\'s output (the only time the node outputs a secret), so store it right away; Get Many never shows secrets.',
	},
	{
		displayName: 'Subscription Options',
		name: 'subscriptionOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Allow Insecure URL',
				name: 'allowInsecureUrl',
				type: 'boolean',
				default: false,
				description:
					'Whether to accept an http:// callback URL, for a local test server. The production service delivers to https:// addresses only.',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['webhookSubscription'], operation: ['create'] } },
	properties,
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	const options = this.getNodeParameter('subscriptionOptions', itemIndex, {}) as IDataObject;
	const url = checkCallbackUrl(
		this,
		this.getNodeParameter('url', itemIndex),
		'Callback URL',
		options.allowInsecureUrl === true,
		itemIndex,
	);
	const eventKey = String(this.getNodeParameter('event', itemIndex) ?? '');
	const event = findEvent(eventKey);
	if (!event) {
		throw new NodeOperationError(this.getNode(), `Event "${eventKey}" is not one the service emits (item ${itemIndex + 1})`, {
			itemIndex,
			description: 'Pick an event from the list; an expression must give a value such as consultation:consultation-finished.',
		});
	}
	const given = String(this.getNodeParameter('secret', itemIndex, '') ?? '');
	const generated = given.trim() === '' ? randomBytes(32).toString('hex') : undefined;
	const secret = generated ?? given;
	const topic = fullTopic(await requireTopicPrefix(this, client, itemIndex), event.suffix);

	const body = await new WebhookSubscriptions(client, () => this.getNode()).create(
		{ url, topic, eventName: event.name, secret },
		`The subscription to ${event.name} on ${topic}`,
		itemIndex,
	);
	const answer = body && typeof body === 'object' ? unwrap(this, body, 'webhook', itemIndex) : {};
	const subscription = withoutSecret(
		Object.keys(answer).length ? answer : { url, event_topic: topic, event_name: event.name },
	);
	return toItems(generated ? { ...subscription, hasSecret: true, secret: generated } : subscription);
}
