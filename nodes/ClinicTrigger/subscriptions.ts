/** The reconcile of the trigger's subscriptions (activation, resubscribe): keep what is provably ours, subscribe what is missing, remove the rest. */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, INode, Logger } from 'n8n-workflow';

import { EVENTS, describeTopicPrefixProblem, findEvent, fullTopic } from '../shared/catalog';
import type { CatalogEvent } from '../shared/catalog';
import type { ClinicClient } from '../shared/transport';
import { addressOf, callbackUrl, eventKeyOfUrl, pathOf } from '../shared/urls';
import { WebhookSubscriptions, descriptionOf, isLive, messageOf } from '../shared/webhookSubscriptions';
import type { RemoteSubscription } from '../shared/webhookSubscriptions';
import { signingKeyId, subscriptionSecret } from './signature';
import { isCurrent, storeSubscription, storedSubscriptions, triggerIdOf } from './storage';
import type { StoredSubscription } from './storage';

/** A failed hook or subscribe: `failed`, then the service's answer; `after` (what was done) ends the description. A NodeOperationError: 1.x shows only a NodeApiError's description. */
export function subscriptionError(node: INode, error: unknown, failed?: string, after = ''): NodeOperationError {
	if (!failed && error instanceof NodeOperationError) return error;
	const message = failed ? `${failed}: ${messageOf(error)}` : messageOf(error);
	return new NodeOperationError(node, message, { description: [descriptionOf(error), after].filter(Boolean).join(' ') || undefined });
}

/** What the reconcile works with, read from n8n by the hook or the delivery: the node's address and selected events. */
export interface Setup {
	node: INode;
	staticData: IDataObject;
	webhookUrl: string;
	keys: string[];
}

/** The selected events, once each; unknown keys (from an older catalog) are reported by `subscribe`. */
export function selectedEventKeys(value: unknown): string[] {
	return [...new Set(Array.isArray(value) ? value.map(String) : [])];
}

/** The catalog event a listed subscription is for, when address, topic and event name agree. */
export function eventOfSubscription(subscription: RemoteSubscription, topicPrefix: string): CatalogEvent | undefined {
	const event = findEvent(eventKeyOfUrl(subscription.url));
	if (!event || subscription.event_name !== event.name || subscription.event_topic !== fullTopic(topicPrefix, event.suffix)) return undefined;
	return event;
}

export const sameId = (a: number | string, b: number | string): boolean => String(a) === String(b);

export async function listedAtAddress(setup: Setup, client: ClinicClient): Promise<RemoteSubscription[]> {
	const address = addressOf(setup.webhookUrl);
	return (await new WebhookSubscriptions(client, () => setup.node).list()).filter((s) => isLive(s) && addressOf(s.url) === address);
}

function selectedEvents(node: INode, keys: string[]): CatalogEvent[] {
	if (keys.length === 0) throw new NodeOperationError(node, 'No events selected', { description: 'Pick at least one event under "Events".' });
	return keys.map((key) => {
		const event = findEvent(key);
		if (event) return event;
		throw new NodeOperationError(node, `Unknown event "${key}"`, { description: `Pick the event again under "Events". Known events: ${EVENTS.map((e) => e.key).join(', ')}` });
	});
}

/**
 * What the reconcile keeps of the service's subscriptions (provably ours) and removes: the rest at our address, disabled
 * ones there (replaced, so no orphan is left), and our stored ids at our path on another host (WEBHOOK_URL changed).
 */
export async function reconcilePlan(setup: Setup, client: ClinicClient, topicPrefix: string) {
	const all = await new WebhookSubscriptions(client, () => setup.node).list();
	const signingKey = await client.webhookSigningKey();
	const address = addressOf(setup.webhookUrl);
	const stored = storedSubscriptions(setup.staticData);
	const keyId = signingKeyId(signingKey);
	const kept = new Map<string, StoredSubscription>();
	const toRemove: RemoteSubscription[] = [];
	for (const subscription of all) {
		if (!isLive(subscription)) {
			if (!subscription.deleted_at && addressOf(subscription.url) === address) toRemove.push(subscription);
			continue;
		}
		if (addressOf(subscription.url) !== address) {
			const storedHere = [...stored.values()].some((entry) => sameId(entry.id, subscription.id));
			if (storedHere && pathOf(subscription.url) === pathOf(setup.webhookUrl)) toRemove.push(subscription);
			continue;
		}
		const event = eventOfSubscription(subscription, topicPrefix);
		const entry = event && stored.get(event.key);
		const listed = subscription.authentication_data?.secret;
		// Listed with the secret we derive (another main's too), or stored with the current key and listed without one.
		const ours = event && setup.keys.includes(event.key) && !kept.has(event.key) && (typeof listed === 'string' ? listed === subscriptionSecret(signingKey, triggerIdOf(setup.node), event.key) : !!entry && sameId(entry.id, subscription.id) && isCurrent(entry, signingKey));
		if (event && ours) kept.set(event.key, { id: subscription.id, topic: subscription.event_topic as string, keyId });
		else toRemove.push(subscription);
	}
	return { signingKey, keyId, kept, toRemove };
}

/** At activation a failed subscribe removes what the trigger holds (a half-active trigger misses events); a resubscribe removes nothing then: the working subscriptions go on delivering. */
export async function subscribe(setup: Setup, client: ClinicClient, logger: Logger, { removeOnFailure = true } = {}): Promise<void> {
	const { node, staticData } = setup;
	const events = selectedEvents(node, setup.keys);
	const topicPrefix = (await client.integrationSettings()).topicPrefix;
	const problem = describeTopicPrefixProblem(topicPrefix);
	if (problem) throw new NodeOperationError(node, problem, { description: 'Topics are that prefix, a dot and a suffix such as patient: clinic-38729.patient.' });
	const subscriptions = new WebhookSubscriptions(client, () => node);

	// 1. Keep what is provably ours, remove the rest. A credential without a signing key gets one at this sign-in.
	await client.webhookSigningKey({ ensure: true });
	const { signingKey, keyId, kept, toRemove } = await reconcilePlan(setup, client, topicPrefix);
	if (!signingKey) throw new NodeOperationError(node, 'The Clinic credential holds no webhook signing key', { description: 'n8n stores one in the credential when it signs in. Open the credential, click Save (or Test), and activate the workflow again.' });
	const secretFor = (key: string) => subscriptionSecret(signingKey, triggerIdOf(node), key);
	for (const [key, entry] of kept) storeSubscription(staticData, key, entry);

	// 2. Subscribe each missing event, storing as we go, before what it replaces is removed.
	for (const event of events.filter((e) => !kept.has(e.key))) {
		const topic = fullTopic(topicPrefix, event.suffix);
		try {
			const id = await subscriptions.subscribe({ url: callbackUrl(setup.webhookUrl, event.key), topic, eventName: event.name, secret: secretFor(event.key) }, `The subscription to ${event.label}`);
			storeSubscription(staticData, event.key, { id, topic, keyId });
		} catch (error) {
			const note = removeOnFailure ? cleanupNote((await removeOurs(setup, client)).failed) : '';
			throw subscriptionError(node, error, `Could not subscribe to "${event.label}"`, note);
		}
	}

	// 3. Remove what is not ours or replaced (one whose DELETE fails is left for the next activation); forget unselected events.
	const leftOver: string[] = [];
	for (const subscription of toRemove) await subscriptions.removeIfPresent(subscription.id).catch((error: Error) => leftOver.push(`${subscription.id} (${error.message})`));
	if (leftOver.length > 0) logger.warn(`Clinic Trigger "${node.name}": could not remove subscription(s) ${leftOver.join(', ')}; the next activation tries again. Its own subscriptions work.`);
	for (const key of storedSubscriptions(staticData).keys()) if (!setup.keys.includes(key)) delete staticData[key];

	// 4. Another main may have subscribed the same events at once: every main keeps the lowest id of each.
	if (events.every((event) => kept.has(event.key))) return;
	const live = await listedAtAddress(setup, client);
	for (const event of events) {
		const [keep, ...extra] = live
			.filter((s) => eventOfSubscription(s, topicPrefix)?.key === event.key && s.authentication_data?.secret === secretFor(event.key))
			.sort((a, b) => compareIds(a.id, b.id));
		if (extra.length === 0) continue;
		for (const subscription of extra) await subscriptions.removeIfPresent(subscription.id);
		storeSubscription(staticData, event.key, { id: keep.id, topic: keep.event_topic as string, keyId });
	}
}

/** After a failed activation's subscribe: what could not be removed. */
function cleanupNote(failed: string[]): string {
	if (failed.length === 0) return 'The subscriptions made for this trigger were removed again, so it is not half-active.';
	return `Subscription(s) ${failed.join(', ')} could not be removed; n8n will try again when the workflow is deactivated, or remove them with the Clinic node.`;
}

const compareIds = (a: number | string, b: number | string) => (Number.isFinite(Number(a)) && Number.isFinite(Number(b)) ? Number(a) - Number(b) : String(a).localeCompare(String(b)));

/** Removes the stored subscriptions and anything live at the address (a POST whose answer was lost); what could not be removed stays stored. */
export async function removeOurs(setup: Setup, client: ClinicClient): Promise<{ failed: string[]; errors: unknown[] }> {
	const { staticData } = setup;
	const subscriptions = new WebhookSubscriptions(client, () => setup.node);
	const failed = new Set<string>();
	const errors: unknown[] = [];
	const removeOne = async (id: number | string, key?: string) => {
		try {
			await subscriptions.removeIfPresent(id);
			if (key) delete staticData[key];
			// Removed by the sweep after a first try whose answer was lost.
			failed.delete(String(id));
		} catch (error) {
			failed.add(String(id));
			errors.push(error);
		}
	};
	for (const [key, entry] of storedSubscriptions(staticData)) await removeOne(entry.id, key);
	if (addressOf(setup.webhookUrl)) {
		try {
			for (const subscription of await listedAtAddress(setup, client)) await removeOne(subscription.id);
		} catch (error) {
			// The list itself failed: the stored ids above were all that was known.
			errors.push(error);
		}
	}
	return { failed: [...failed], errors };
}
