/**
 * The reconcile of the trigger's subscriptions, at activation (lifecycle.ts) and when a
 * delivery resubscribes (resubscribe.ts): keeps what is provably its own (stored, or listed
 * with the secret it derives: another main's), subscribes each missing event, then removes
 * the rest (one whose DELETE fails stays for the next activation), then keeps one per event
 * should another main have subscribed at once. At activation a failed subscribe removes
 * what it holds and throws: a half-active trigger misses events. Secrets never reach errors or logs.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IHookFunctions, INode, IWebhookFunctions } from 'n8n-workflow';

type TriggerContext = IHookFunctions | IWebhookFunctions;

import { EVENTS, describeTopicPrefixProblem, findEvent, fullTopic } from '../shared/catalog';
import { signingKeyId, subscriptionSecret } from './signature';
import type { CatalogEvent } from '../shared/catalog';
import { clientFor } from '../shared/transport';
import type { ClinicClient } from '../shared/transport';
import { WebhookSubscriptions, isLive } from '../shared/webhookSubscriptions';
import { subscribeError } from './subscriptionErrors';
import type { RemoteSubscription } from '../shared/webhookSubscriptions';
import { forgetSubscription, isCurrent, secretOf, storeSubscription, storedSubscriptions, triggerIdOf } from './storage';
import type { StoredSubscription } from './storage';
import { addressOf, callbackUrl, eventKeyOfUrl, pathOf } from '../shared/urls';

/**
 * The catalog event a listed subscription is for, when its address, topic and event name
 * all agree; undefined otherwise.
 */
export function eventOfSubscription(subscription: RemoteSubscription, topicPrefix: string): CatalogEvent | undefined {
	const event = findEvent(eventKeyOfUrl(subscription.url));
	if (!event) return undefined;
	if (subscription.event_name !== event.name) return undefined;
	if (subscription.event_topic !== fullTopic(topicPrefix, event.suffix)) return undefined;
	return event;
}

/** False only when the service lists a secret and it is not the expected one. */
export function secretAgrees(subscription: RemoteSubscription, secret: string | undefined): boolean {
	const listed = subscription.authentication_data?.secret;
	return typeof listed !== 'string' || listed === secret;
}

export const sameId = (a: number | string, b: number | string): boolean => String(a) === String(b);

export interface Setup {
	node: INode;
	client: ClinicClient;
	subscriptions: WebhookSubscriptions;
	staticData: IDataObject;
	/** The node's webhook URL (production or test), without query. */
	webhookUrl: string;
	address: string;
}

export function readSetup(ctx: TriggerContext): Setup {
	const node = ctx.getNode();
	const webhookUrl = ctx.getNodeWebhookUrl('default') ?? '';
	const client = clientFor(ctx);
	return {
		node,
		client,
		subscriptions: new WebhookSubscriptions(client, () => node),
		staticData: ctx.getWorkflowStaticData('node'),
		webhookUrl,
		address: addressOf(webhookUrl),
	};
}

/** The selected events; unknown keys (from an older catalog) are reported by `create`. */
export function selectedEventKeys(ctx: TriggerContext): string[] {
	const value = ctx.getNodeParameter('events', []) as unknown;
	const keys = Array.isArray(value) ? value.map(String) : [];
	return [...new Set(keys)];
}

export async function topicPrefixOf(setup: Setup): Promise<string> {
	return (await setup.client.integrationSettings()).topicPrefix;
}

function selectedEvents(node: INode, keys: string[]): CatalogEvent[] {
	if (keys.length === 0) {
		throw new NodeOperationError(node, 'No events selected', {
			description: 'Pick at least one event under "Events".',
		});
	}
	return keys.map((key) => {
		const event = findEvent(key);
		if (!event) {
			throw new NodeOperationError(node, `Unknown event "${key}"`, {
				description: `Pick the event again under "Events". Known events: ${EVENTS.map((e) => e.key).join(', ')}`,
			});
		}
		return event;
	});
}

/**
 * What `create` does (the node checked the address and the webhook service address first,
 * lifecycle.ts), and a resubscribe, which removes nothing when a subscribe fails: the
 * working subscriptions go on delivering.
 */
export async function subscribe(ctx: TriggerContext, { removeOnFailure = true } = {}): Promise<void> {
	const setup = readSetup(ctx);
	const events = selectedEvents(setup.node, selectedEventKeys(ctx));
	const topicPrefix = await topicPrefixOf(setup);
	const problem = describeTopicPrefixProblem(topicPrefix);
	if (problem) {
		throw new NodeOperationError(setup.node, problem, {
			description: 'Topics are that prefix, a dot and a suffix such as patient: clinic-38729.patient.',
		});
	}
	const { subscriptions, staticData } = setup;
	const stored = storedSubscriptions(staticData);
	const selected = new Set(events.map((e) => e.key));

	// 1. Keep what is provably ours; remove everything else at our address, and our stored
	//    ids at the same path on another host (n8n's WEBHOOK_URL changed). Stored ids at
	//    another path are only forgotten: in test mode that is the production trigger's.
	// A credential saved before signing keys existed gets one at the sign-in this list makes.
	await setup.client.webhookSigningKey({ ensure: true });
	const all = await subscriptions.list();
	const signingKey = await setup.client.webhookSigningKey();
	if (!signingKey) {
		throw new NodeOperationError(setup.node, 'The Clinic credential holds no webhook signing key', {
			description:
				'n8n stores one in the credential when it signs in. Open the credential, click Save (or Test), and activate the workflow again.',
		});
	}
	const kept = new Map<string, StoredSubscription>();
	const toRemove: RemoteSubscription[] = [];
	const ourPath = pathOf(setup.webhookUrl);
	for (const subscription of all) {
		if (!isLive(subscription)) {
			// Disabled by the service at our address: replaced below, so removed, no orphan left.
			if (!subscription.deleted_at && addressOf(subscription.url) === setup.address) toRemove.push(subscription);
			continue;
		}
		if (addressOf(subscription.url) !== setup.address) {
			const storedHere = [...stored.values()].some((entry) => sameId(entry.id, subscription.id));
			if (storedHere && pathOf(subscription.url) === ourPath) toRemove.push(subscription);
			continue;
		}
		const event = eventOfSubscription(subscription, topicPrefix);
		const entry = event ? stored.get(event.key) : undefined;
		const ours =
			event &&
			selected.has(event.key) &&
			!kept.has(event.key) &&
			(provesOurSecret(subscription, setup.node, event.key, signingKey) ||
				(entry !== undefined &&
					sameId(entry.id, subscription.id) &&
					isCurrent(entry, signingKey) &&
					secretAgrees(subscription, secretOf(setup.node, event.key, entry, signingKey))));
		if (event && ours) {
			// Ours: stored by us, or made by another n8n main activating the same trigger at
			// the same time (the listed secret is the one we derive): adopt it.
			kept.set(event.key, { id: subscription.id, topic: subscription.event_topic as string, keyId: signingKeyId(signingKey) });
		} else {
			toRemove.push(subscription);
		}
	}
	for (const [key, entry] of kept) storeSubscription(staticData, key, entry);

	// 2. Subscribe each missing event with its own secret, storing as we go, before what
	//    it replaces is removed: an event in between is still delivered (to the new one;
	//    the old one's copy is refused 401 and its duplicate check catches a repeat).
	const keyId = signingKeyId(signingKey);
	let subscribed = false;
	for (const event of events) {
		if (kept.has(event.key)) continue;
		const secret = subscriptionSecret(signingKey, triggerIdOf(setup.node), event.key);
		const topic = fullTopic(topicPrefix, event.suffix);
		try {
			const url = callbackUrl(setup.webhookUrl, event.key);
			const id = await subscriptions.subscribe({ url, topic, eventName: event.name, secret }, `The subscription to ${event.label}`);
			storeSubscription(staticData, event.key, { id, topic, keyId });
			subscribed = true;
		} catch (error) {
			throw subscribeError(setup.node, event, error, removeOnFailure ? (await removeOurs(setup)).failed : undefined);
		}
	}

	// 3. Remove what is not ours, or replaced; forget events no longer selected. A DELETE that
	//    fails removes nothing that works: that one is left for the next activation.
	const leftOver: string[] = [];
	for (const subscription of toRemove) {
		try {
			await subscriptions.removeIfPresent(subscription.id);
		} catch (error) {
			leftOver.push(`${subscription.id} (${(error as Error).message})`);
		}
	}
	if (leftOver.length > 0) {
		ctx.logger.warn(`Clinic Trigger "${setup.node.name}": could not remove subscription(s) ${leftOver.join(', ')}; the next activation tries again. Its own subscriptions work.`);
	}
	for (const key of stored.keys()) if (!kept.has(key) && !selected.has(key)) forgetSubscription(staticData, key);

	// 4. Another main may have subscribed the same events in the same moment: keep the
	//    lowest id of each event, remove the rest. Every main picks the same one.
	if (subscribed) await convergeWithOtherMains(setup, events, topicPrefix, signingKey);
}

/** True when the service lists this subscription's secret and it is the one we derive. */
function provesOurSecret(subscription: RemoteSubscription, node: INode, eventKey: string, signingKey: string): boolean {
	const listed = subscription.authentication_data?.secret;
	return typeof listed === 'string' && listed === subscriptionSecret(signingKey, triggerIdOf(node), eventKey);
}

async function convergeWithOtherMains(setup: Setup, events: CatalogEvent[], topicPrefix: string, signingKey: string): Promise<void> {
	const live = (await setup.subscriptions.list()).filter((s) => isLive(s) && addressOf(s.url) === setup.address);
	for (const event of events) {
		const same = live
			.filter((s) => eventOfSubscription(s, topicPrefix)?.key === event.key && provesOurSecret(s, setup.node, event.key, signingKey))
			.sort((a, b) => compareIds(a.id, b.id));
		if (same.length < 2) continue;
		const [keep, ...extra] = same;
		for (const subscription of extra) await setup.subscriptions.removeIfPresent(subscription.id);
		storeSubscription(setup.staticData, event.key, { id: keep.id, topic: keep.event_topic as string, keyId: signingKeyId(signingKey) });
	}
}

function compareIds(a: number | string, b: number | string): number {
	const [x, y] = [Number(a), Number(b)];
	if (Number.isFinite(x) && Number.isFinite(y)) return x - y;
	return String(a).localeCompare(String(b));
}

/**
 * Removes every subscription of this trigger: the stored ones, and anything live at its
 * address (which covers a POST whose answer was lost). What could not be removed stays
 * stored, for the next activation or deactivation to try again.
 */
export async function removeOurs(setup: Setup): Promise<{ failed: string[]; errors: unknown[] }> {
	const { subscriptions, staticData } = setup;
	const failed: string[] = [];
	const errors: unknown[] = [];
	const removeOne = async (id: number | string, key?: string) => {
		try {
			await subscriptions.removeIfPresent(id);
			if (key) forgetSubscription(staticData, key);
			// Removed by the sweep after a first try whose answer was lost.
			if (failed.includes(String(id))) failed.splice(failed.indexOf(String(id)), 1);
		} catch (error) {
			if (!failed.includes(String(id))) failed.push(String(id));
			errors.push(error);
		}
	};
	for (const [key, entry] of storedSubscriptions(staticData)) await removeOne(entry.id, key);
	if (!setup.address) return { failed, errors };
	try {
		const stray = (await subscriptions.list()).filter((s) => isLive(s) && addressOf(s.url) === setup.address);
		for (const subscription of stray) await removeOne(subscription.id);
	} catch (error) {
		// The list itself failed: the stored ids above were all that was known.
		errors.push(error);
	}
	return { failed, errors };
}
