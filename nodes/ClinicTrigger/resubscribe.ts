/**
 * A stale subscription (of a signing key the credential no longer holds, or disabled or deleted by the service),
 * replaced from a delivery by activation's reconcile, one at a time per trigger. What it missed runs from the log.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { INode, Logger } from 'n8n-workflow';

import type { ClinicClient } from '../shared/transport';
import { WebhookSubscriptions, isLive, messageOf } from '../shared/webhookSubscriptions';
import type { StoredSubscription } from './storage';
import { sameId, subscribe } from './subscriptions';
import type { Setup } from './subscriptions';

export type StaleReason = keyof typeof WHAT_HAPPENED;

/** In the trigger's memory: when its subscriptions were last listed, the resubscribe under way, when an unverified delivery last started one, when one last failed, and why what it left is stale. */
export interface SubscriptionWatch {
	listedAt?: number;
	resubscribing?: Promise<unknown>;
	unverifiedAt?: number;
	failedAt?: number;
	stale?: StaleReason;
}

const WHAT_HAPPENED = {
	signingKeyChanged: "the credential's webhook signing key changed, so the service's deliveries could not be verified",
	subscriptionDisabled: 'the clinic service disabled the subscription, so it stopped delivering',
	subscriptionDeleted: 'the clinic service deleted the subscription, so it stopped delivering',
};

/** How often a trigger's subscriptions are listed, and how often an unverified delivery may resubscribe. */
const STALE_CHECK_EVERY_MS = 60_000;

/** A delivery that could not be verified may start a resubscribe: at most one a minute per trigger. */
export function mayResubscribeUnverified(watch: SubscriptionWatch): boolean {
	if (Date.now() - (watch.unverifiedAt ?? 0) < STALE_CHECK_EVERY_MS) return false;
	watch.unverifiedAt = Date.now();
	return true;
}

/** Why subscriptions are stale: the service disabled or deleted one (or a failed resubscribe left it), listed at most once a minute; a failed list finds none. */
export async function findStoppedSubscriptions(node: INode, client: ClinicClient, logger: Logger, stored: Map<string, StoredSubscription>, watch: SubscriptionWatch): Promise<StaleReason | undefined> {
	if (watch.stale) return watch.stale;
	const entries = [...stored.values()].filter((entry) => !entry.legacySecret);
	if (entries.length === 0 || Date.now() - (watch.listedAt ?? 0) < STALE_CHECK_EVERY_MS) return undefined;
	watch.listedAt = Date.now();
	const listed = await new WebhookSubscriptions(client, () => node).list().catch((error: Error) => {
		logger.warn(`Clinic Trigger "${node.name}": could not list its subscriptions (${error.message})`);
		return undefined;
	});
	if (!listed) return undefined;
	const stale = entries.map((entry) => listed.find((s) => sameId(s.id, entry.id))).filter((subscription) => !subscription || !isLive(subscription));
	if (stale.length === 0) return undefined;
	return stale.some((subscription) => !subscription || subscription.deleted_at) ? 'subscriptionDeleted' : 'subscriptionDisabled';
}

/** Subscribes again, or waits for the resubscribe under way; when it cannot, says what happened and what to do. */
export async function resubscribe(setup: Setup, client: ClinicClient, logger: Logger, stale: StaleReason, watch: SubscriptionWatch): Promise<void> {
	if (watch.resubscribing) {
		await watch.resubscribing.catch(() => undefined);
		return;
	}
	const { node } = setup;
	const what = WHAT_HAPPENED[stale];
	watch.resubscribing = subscribe(setup, client, logger, { removeOnFailure: false });
	try {
		await watch.resubscribing;
		watch.stale = undefined;
		logger.warn(`Clinic Trigger "${node.name}": ${what}; subscribed again (the events missed meanwhile run from the event log)`);
	} catch (error) {
		watch.stale = stale;
		const message = `The Clinic Trigger cannot receive events: ${what}. Subscribing again failed: ${messageOf(error)}`;
		// One that cannot be replaced fails a delivery a minute; the working subscriptions' deliveries run meanwhile.
		if (stale !== 'signingKeyChanged' && Date.now() - (watch.failedAt ?? 0) < STALE_CHECK_EVERY_MS) {
			logger.warn(`Clinic Trigger "${node.name}": ${message}`);
			return;
		}
		watch.failedAt = Date.now();
		throw new NodeOperationError(node, message, {
			description: "Its other subscriptions were left in place, and the next delivery to this trigger subscribes again (one that cannot be verified, at most once a minute). If this keeps failing, check that the Clinic credential can sign in and manage webhooks, then deactivate and activate the workflow. Meanwhile the Clinic Event Log Trigger, or the Clinic node's Event > Get Many, lists the events.",
		});
	} finally {
		watch.resubscribing = undefined;
	}
}
