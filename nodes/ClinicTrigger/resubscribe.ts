/**
 * A stale subscription (made with a signing key the credential no longer holds, or disabled
 * or deleted by the service: listed at most once a minute per trigger), replaced from a
 * delivery by activation's own reconcile (subscriptions.ts): what works stays, the missing
 * one is made (or adopted when a resubscribe whose delivery n8n then failed made it: it is
 * live at the trigger's address with the secret it derives), then the stale one removed.
 * The events it missed are in the log past the trigger's cursor: they run with this
 * delivery. One at a time per trigger; unverified deliveries start at most one a minute (a
 * forged one looks the same). A failure removes nothing and fails the delivery with what to
 * do; the next delivery tries again.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IWebhookFunctions } from 'n8n-workflow';

import type { ClinicClient } from '../shared/transport';
import { WebhookSubscriptions, isLive, messageOf } from '../shared/webhookSubscriptions';
import type { RemoteSubscription } from '../shared/webhookSubscriptions';
import { memoryOf } from './memory';
import type { StaleSubscriptions } from './memory';
import type { StoredSubscription } from './storage';
import { subscribe } from './subscriptions';

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

/**
 * Subscribes again; when another delivery of this trigger is resubscribing, this one waits
 * for it. Throws a NodeOperationError that says what happened and what to do when it cannot.
 */
export async function resubscribe(ctx: IWebhookFunctions, stale: StaleSubscriptions, trigger: string): Promise<void> {
	const memory = memoryOf(trigger);
	if (memory.resubscribing) {
		await memory.resubscribing.catch(() => undefined);
		return;
	}
	const node = ctx.getNode();
	const what = WHAT_HAPPENED[stale.reason];
	const running = subscribe(ctx, { removeOnFailure: false });
	memory.resubscribing = running;
	try {
		await running;
		memory.stale = undefined;
		ctx.logger.warn(`Clinic Trigger "${node.name}": ${what}; subscribed again (the events missed meanwhile run from the event log)`);
	} catch (error) {
		memory.stale = stale;
		const message = `The Clinic Trigger cannot receive events: ${what}. Subscribing again failed: ${messageOf(error)}`;
		// A stopped subscription that cannot be replaced fails one delivery a minute; the
		// deliveries of the working ones meanwhile run (the n8n log says it failed again).
		if (stale.reason !== 'signingKeyChanged' && Date.now() - (memory.failedAt ?? 0) < STALE_CHECK_EVERY_MS) {
			ctx.logger.warn(`Clinic Trigger "${node.name}": ${message}`);
			return;
		}
		memory.failedAt = Date.now();
		throw new NodeOperationError(node, message, {
			description:
				"Its other subscriptions were left in place, and the next delivery to this trigger subscribes again (one that cannot be verified, at most once a minute). If this keeps failing, check that the Clinic credential can sign in and manage webhooks, then deactivate and activate the workflow. Meanwhile the Clinic Event Log Trigger, or the Clinic node's Event > Get Many, lists the events.",
		});
	} finally {
		memory.resubscribing = undefined;
	}
}
