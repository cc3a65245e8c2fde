/**
 * A stale subscription (made with a signing key the credential no longer holds, or disabled
 * or deleted by the service: listed at most once a minute per trigger), replaced from a
 * delivery: the new one made (or one found live at the trigger's address with the secret it
 * derives: made by a resubscribe whose delivery n8n then failed) and stored, then the stale
 * one removed; every working one stays. The events it missed are in the log past the
 * trigger's cursor: they run with this delivery. One at a time per trigger; unverified
 * deliveries start at most one a minute (a forged one looks the same). A failure fails the
 * delivery with what to do; the next delivery tries again.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IWebhookFunctions } from 'n8n-workflow';

import { findEvent } from '../shared/catalog';
import type { CatalogEvent } from '../shared/catalog';
import type { ClinicClient } from '../shared/transport';
import { addressOf, callbackUrl, eventKeyOfUrl } from '../shared/urls';
import { WebhookSubscriptions, isLive } from '../shared/webhookSubscriptions';
import type { RemoteSubscription } from '../shared/webhookSubscriptions';
import { memoryOf } from './memory';
import type { StaleSubscriptions, TriggerMemory } from './memory';
import { subscriptionSecret, signingKeyId } from './signature';
import { storeSubscription, triggerIdOf } from './storage';
import type { StoredSubscription } from './storage';

const WHAT_HAPPENED: Record<StaleSubscriptions['reason'], string> = {
	signingKeyChanged: "the credential's webhook signing key changed, so the service's deliveries could not be verified",
	subscriptionDisabled: 'the clinic service disabled the subscription, so it stopped delivering',
	subscriptionDeleted: 'the clinic service deleted the subscription, so it stopped delivering',
};

/** How often a trigger's subscriptions are listed, and how often an unverified delivery may resubscribe. */
export const STALE_CHECK_EVERY_MS = 60_000;

/** A delivery that could not be verified may start a resubscribe: at most one a minute per trigger. */
export function mayResubscribeUnverified(trigger: string): boolean {
	const state = memoryOf(trigger);
	if (Date.now() - (state.unverifiedAt ?? 0) < STALE_CHECK_EVERY_MS) return false;
	state.unverifiedAt = Date.now();
	return true;
}

/**
 * The subscriptions the service disabled or deleted (or those a failed resubscribe left),
 * looked for at most once a minute. A failed look finds nothing stale.
 */
export async function findStoppedSubscriptions(
	ctx: IWebhookFunctions,
	client: ClinicClient,
	stored: Map<string, StoredSubscription>,
	trigger: string,
): Promise<StaleSubscriptions | undefined> {
	const state = memoryOf(trigger);
	if (state.stale) return state.stale;
	const entries = [...stored].filter(([, entry]) => !entry.legacySecret);
	if (entries.length === 0 || Date.now() - (state.listedAt ?? 0) < STALE_CHECK_EVERY_MS) return undefined;
	state.listedAt = Date.now();
	let listed: RemoteSubscription[];
	try {
		listed = await new WebhookSubscriptions(client, () => ctx.getNode()).list();
	} catch (error) {
		ctx.logger.warn(`Clinic Trigger "${ctx.getNode().name}": could not list its subscriptions (${(error as Error).message})`);
		return undefined;
	}
	const found = entries.map(([key, entry]) => ({ key, subscription: listed.find((s) => String(s.id) === String(entry.id)) }));
	const stale = found.filter(({ subscription }) => !subscription || !isLive(subscription));
	if (stale.length === 0) return undefined;
	const deleted = stale.some(({ subscription }) => !subscription || subscription.deleted_at);
	return { reason: deleted ? 'subscriptionDeleted' : 'subscriptionDisabled', keys: stale.map(({ key }) => key) };
}

/** What a resubscribe needs from the delivery that starts it. */
export interface Resubscribing {
	trigger: string;
	client: ClinicClient;
	signingKey: string;
}

/**
 * Subscribes again; when another delivery of this trigger is resubscribing, this one waits
 * for it. Throws a NodeOperationError that says what happened and what to do when it cannot.
 */
export async function resubscribe(ctx: IWebhookFunctions, stale: StaleSubscriptions, stored: Map<string, StoredSubscription>, by: Resubscribing): Promise<void> {
	const state = memoryOf(by.trigger);
	if (state.resubscribing) {
		await state.resubscribing.catch(() => undefined);
		return;
	}
	const running = resubscribeNow(ctx, state, stale, stored, by);
	state.resubscribing = running;
	try {
		await running;
	} catch (error) {
		// A stopped subscription that cannot be replaced fails one delivery a minute; the
		// deliveries of the working ones meanwhile run (the n8n log says it failed again).
		if (stale.reason === 'signingKeyChanged' || Date.now() - (state.failedAt ?? 0) >= STALE_CHECK_EVERY_MS) {
			state.failedAt = Date.now();
			// The same NodeOperationError resubscribeNow threw (n8n-workflow hands it back).
			throw new NodeOperationError(ctx.getNode(), error as Error);
		}
		ctx.logger.warn(`Clinic Trigger "${ctx.getNode().name}": ${(error as Error).message}`);
	} finally {
		state.resubscribing = undefined;
	}
}

/** A stale subscription's replacement; `id` once the service made it. */
type Replacement = { key: string; event: CatalogEvent; entry: StoredSubscription; secret: string; id?: number | string };

async function resubscribeNow(
	ctx: IWebhookFunctions,
	state: TriggerMemory,
	stale: StaleSubscriptions,
	stored: Map<string, StoredSubscription>,
	{ client, signingKey }: Resubscribing,
): Promise<void> {
	const node = ctx.getNode();
	const what = WHAT_HAPPENED[stale.reason];
	if (!signingKey) throw new NodeOperationError(node, 'The Clinic credential holds no webhook signing key: open it, click Save, then deactivate and activate the workflow');
	const replacements: Replacement[] = stale.keys.flatMap((key) => {
		const event = findEvent(key);
		const entry = stored.get(key);
		return event && entry ? [{ key, event, entry, secret: subscriptionSecret(signingKey, triggerIdOf(node), key) }] : [];
	});

	// At the service: each new subscription made (or found at our address) before its stale one goes.
	const subscriptions = new WebhookSubscriptions(client, () => node);
	const webhookUrl = ctx.getNodeWebhookUrl('default') ?? '';
	let failure: Error | undefined;
	try {
		const listed = await subscriptions.list();
		for (const made of replacements) {
			const url = callbackUrl(webhookUrl, made.key);
			made.id = listed.find((s) => String(s.id) !== String(made.entry.id) && isOurs(s, webhookUrl, made))?.id;
			made.id ??= await subscriptions.subscribe({ url, topic: made.entry.topic, eventName: made.event.name, secret: made.secret }, `The subscription to ${made.event.label}`);
			// A stale subscription that cannot be removed is left for activation to clean up.
			await subscriptions.removeIfPresent(made.entry.id).catch(() => false);
		}
	} catch (error) {
		failure = error as Error;
	}

	// Here: what was made is stored, whatever failed after it.
	for (const made of replacements) {
		if (made.id !== undefined) storeSubscription(ctx.getWorkflowStaticData('node'), made.key, { id: made.id, topic: made.entry.topic, keyId: signingKeyId(signingKey) });
	}
	const notMade = replacements.filter((made) => made.id === undefined).map((made) => made.key);
	state.stale = notMade.length > 0 ? { reason: stale.reason, keys: notMade } : undefined;
	if (failure && notMade.length > 0) {
		throw new NodeOperationError(node, `The Clinic Trigger cannot receive events: ${what}. Subscribing again failed: ${failure.message}`, {
			description:
				"Its other subscriptions were left in place, and the next delivery to this trigger subscribes again (one that cannot be verified, at most once a minute). If this keeps failing, check that the Clinic credential can sign in and manage webhooks, then deactivate and activate the workflow. Meanwhile the Clinic Event Log Trigger, or the Clinic node's Event > Get Many, lists the events.",
		});
	}
	ctx.logger.warn(`Clinic Trigger "${node.name}": ${what}; subscribed again (the events missed meanwhile run from the event log)`);
}

/** A live subscription at the trigger's address for this event with the secret it derives. */
function isOurs(subscription: RemoteSubscription, webhookUrl: string, made: Replacement): boolean {
	return (
		isLive(subscription) &&
		addressOf(subscription.url) === addressOf(webhookUrl) &&
		eventKeyOfUrl(subscription.url) === made.key &&
		subscription.event_name === made.event.name &&
		subscription.authentication_data?.secret === made.secret
	);
}
