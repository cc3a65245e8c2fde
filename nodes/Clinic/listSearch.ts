/** The "From List" lists of the node's resource locators. */
import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { EVENTS, splitTopic } from '../shared/catalog';
import { clientFor } from '../shared/transport';
import { WebhookSubscriptions, isLive } from '../shared/webhookSubscriptions';

function eventLabel(topic: string, name: string): string {
	const suffix = splitTopic(topic)?.suffix ?? topic;
	return EVENTS.find((event) => event.suffix === suffix && event.name === name)?.label ?? `${name} (${topic})`;
}

/** Live webhook subscriptions of the credential's account, newest first, filtered by the search text. */
export async function searchSubscriptions(this: ILoadOptionsFunctions, filter?: string): Promise<INodeListSearchResult> {
	const client = clientFor(this);
	const records = (await new WebhookSubscriptions(client, () => this.getNode()).list()).filter(isLive);
	const wanted = (filter ?? '').trim().toLowerCase();
	const results = records
		.map((subscription) => ({
			name: `${eventLabel(String(subscription.event_topic ?? ''), String(subscription.event_name ?? ''))} → ${String(subscription.url ?? '')} (#${String(subscription.id)})`,
			value: String(subscription.id),
		}))
		.filter((result) => !wanted || result.name.toLowerCase().includes(wanted))
		.sort((a, b) => Number(b.value) - Number(a.value));
	return { results };
}
