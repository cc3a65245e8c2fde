/**
 * A Clinic Trigger with a stale subscription resubscribes itself where it can, and fails
 * visibly where it cannot. Its subscriptions are stale when:
 *
 * - the credential's webhook signing key is no longer the one they were made with: every
 *   delivery would be refused. Told from static data on any delivery.
 * - the service disabled or deleted one: that event is not delivered at all, so it is
 *   looked for on a verified delivery of any of the trigger's events (one list of
 *   subscriptions, at most once a minute per trigger and process), or at activation.
 *
 * Resubscribing is `subscribe` without roll-back (every working subscription stays), then
 * one run of the events the stale subscriptions missed, read from the event log, each
 * marked `recovered`. One resubscribe at a time per trigger; a delivery that could not be
 * verified starts at most one a minute (a forged one looks the same). When it fails the
 * delivery fails: n8n answers 500, saves a failed execution with the message below and
 * starts the error workflow; the next delivery tries again.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

import { findEvent } from '../shared/catalog';
import { clientFor } from '../shared/transport';
import type { ClinicClient } from '../shared/transport';
import { EventLog } from '../shared/eventLog';
import { WebhookSubscriptions, isLive } from '../shared/webhookSubscriptions';
import type { RemoteSubscription } from '../shared/webhookSubscriptions';
import type { EventRecord } from '../shared/eventRecord';
import { pathOf } from '../shared/urls';
import { claimCaughtUp, ranAt, triesAt } from './duplicateCheck';
import { triggers } from './memory';
import type { TriggerState } from './memory';
import { isCurrent } from './storage';
import type { StoredSubscription } from './storage';
import { subscribe } from './subscriptions';

export type StaleSubscriptions = NonNullable<TriggerState['stale']>;
type StaleReason = StaleSubscriptions['reason'];

const WHAT_HAPPENED: Record<StaleReason, string> = {
	signingKeyChanged: "the credential's webhook signing key changed, so the service's deliveries could not be verified",
	subscriptionDisabled: 'the clinic service disabled the subscription, so it stopped delivering',
	subscriptionDeleted: 'the clinic service deleted the subscription, so it stopped delivering',
};

/** How often a trigger's subscriptions are listed, and how often an unverified delivery may resubscribe. */
export const STALE_CHECK_EVERY_MS = 60_000;

/** Most events one resubscribe catches up per event: the newest are kept. */
export const CATCH_UP_MAX = 100;

function stateOf(trigger: string): TriggerState {
	const state = triggers.get(trigger) ?? {};
	triggers.set(trigger, state);
	return state;
}

/** Events whose stored subscription was made with another signing key than the credential's. */
export function eventsOfOldSigningKey(stored: Map<string, StoredSubscription>, signingKey: string): string[] {
	if (!signingKey) return [];
	return [...stored].filter(([, entry]) => !entry.legacySecret && !isCurrent(entry, signingKey)).map(([key]) => key);
}

/** When the trigger's subscription to an event was made, as last listed; undefined when not known. */
export function subscribedSince(trigger: string, key: string): string | undefined {
	return triggers.get(trigger)?.since?.[key];
}

/** A delivery that could not be verified may start a resubscribe: at most one a minute per trigger. */
export function mayResubscribeUnverified(trigger: string): boolean {
	const state = stateOf(trigger);
	if (Date.now() - (state.unverifiedAt ?? 0) < STALE_CHECK_EVERY_MS) return false;
	state.unverifiedAt = Date.now();
	return true;
}

/** Whether the trigger has stale subscriptions, and for which events. A failed look finds nothing stale. */
export async function findStaleSubscriptions(
	ctx: IWebhookFunctions,
	client: ClinicClient,
	stored: Map<string, StoredSubscription>,
	trigger: string,
	signingKey: string,
): Promise<StaleSubscriptions | undefined> {
	const entries = [...stored].filter(([, entry]) => !entry.legacySecret);
	if (entries.length === 0) return undefined;
	const keyChanged = eventsOfOldSigningKey(stored, signingKey);
	if (keyChanged.length > 0) return { reason: 'signingKeyChanged', keys: keyChanged };
	const state = stateOf(trigger);
	// A resubscribe that failed left these for the next delivery.
	if (state.stale) return state.stale;
	if (Date.now() - (state.listedAt ?? 0) < STALE_CHECK_EVERY_MS) return undefined;
	state.listedAt = Date.now();
	let listed: RemoteSubscription[];
	try {
		listed = await new WebhookSubscriptions(client, () => ctx.getNode()).list();
	} catch (error) {
		ctx.logger.warn(`Clinic Trigger "${ctx.getNode().name}": could not list its subscriptions (${(error as Error).message})`);
		return undefined;
	}
	const found = entries.map(([key, entry]) => ({ key, subscription: listed.find((s) => String(s.id) === String(entry.id)) }));
	state.since = Object.fromEntries(found.map(({ key, subscription }) => [key, subscription?.created_at ? String(subscription.created_at) : undefined]));
	const stale = found
		.filter(({ subscription }) => !subscription || !isLive(subscription));
	if (stale.length === 0) return undefined;
	const deleted = stale.some(({ subscription }) => !subscription || subscription.deleted_at);
	return { reason: deleted ? 'subscriptionDeleted' : 'subscriptionDisabled', keys: stale.map(({ key }) => key) };
}

/**
 * Subscribes again and returns the missed events as items (one per event, oldest first);
 * none when another delivery of this trigger is resubscribing (this one waits for it).
 * Throws a NodeOperationError that says what happened and what to do when it cannot.
 */
export async function resubscribe(
	ctx: IWebhookFunctions,
	trigger: string,
	stale: StaleSubscriptions,
	stored: Map<string, StoredSubscription>,
): Promise<INodeExecutionData[]> {
	const state = stateOf(trigger);
	if (state.resubscribing) {
		await state.resubscribing.catch(() => undefined);
		return [];
	}
	const running = resubscribeNow(ctx, state, stale, stored, trigger);
	state.resubscribing = running;
	try {
		return await running;
	} finally {
		state.resubscribing = undefined;
	}
}

async function resubscribeNow(
	ctx: IWebhookFunctions,
	state: TriggerState,
	stale: StaleSubscriptions,
	stored: Map<string, StoredSubscription>,
	trigger: string,
): Promise<INodeExecutionData[]> {
	const node = ctx.getNode();
	const what = WHAT_HAPPENED[stale.reason];
	const client = clientFor(ctx);
	let listed: RemoteSubscription[];
	try {
		// When the stale subscriptions were made: the catch-up starts there.
		listed = await new WebhookSubscriptions(client, () => node).list();
		await subscribe(ctx, { rollBack: false });
		state.stale = undefined;
		// Made now: when, the next list tells.
		for (const key of stale.keys) delete state.since?.[key];
	} catch (error) {
		state.stale = stale;
		throw new NodeOperationError(node, `The Clinic Trigger cannot receive events: ${what}. Subscribing again failed: ${(error as Error).message}`, {
			description:
				"Its other subscriptions were left in place, and the next delivery to this trigger subscribes again (one that cannot be verified, at most once a minute). If this keeps failing, check that the Clinic credential can sign in and manage webhooks, then deactivate and activate the workflow. Meanwhile the Clinic Event Log Trigger, or the Clinic node's Event > Get Many, lists the events.",
		});
	}

	const ownPath = pathOf(ctx.getNodeWebhookUrl('default') ?? '');
	const log = new EventLog(ctx, client);
	const recovered: IDataObject = {
		reason: stale.reason,
		message: `Caught up from the event log: ${what}. The trigger subscribed again with the credential's current key.`,
	};
	const items: INodeExecutionData[] = [];
	for (const key of stale.keys) {
		const event = findEvent(key);
		const entry = stored.get(key);
		if (!event || !entry) continue;
		const since = String(listed.find((s) => String(s.id) === String(entry.id))?.created_at ?? '');
		let recent: EventRecord[];
		try {
			recent = await log.recent({ topic: entry.topic, name: event.name }, CATCH_UP_MAX);
		} catch (error) {
			throw new NodeOperationError(
				node,
				`The Clinic Trigger subscribed again (${what}), but could not read the events missed meanwhile: ${(error as Error).message}`,
				{ description: "Find them with the Clinic node's Event > Get Many, or the Clinic Event Log Trigger." },
			);
		}
		// Since the stale subscription was made; when the service no longer lists it, only
		// what it tried to deliver here: older events were never this trigger's.
		const missed = recent
			.filter((record) => {
				const sentHere = triesAt(record, ownPath).length > 0;
				return (since ? loggedSince(record, since, sentHere) : sentHere) && !ranAt(record, ownPath);
			})
			.sort((a, b) => a.id - b.id)
			.filter((record) => claimCaughtUp(`${trigger}\n${key}`, record, ownPath));
		for (const record of missed) {
			const json = { event: event.name, topic: entry.topic, eventId: record.id, createdAt: record.created_at, deliveryId: null };
			items.push({ json: { ...json, receivedAt: new Date().toISOString(), value: record.value as IDataObject, recovered } });
		}
	}
	ctx.logger.warn(`Clinic Trigger "${node.name}": ${what}; subscribed again and caught up ${items.length} missed event(s)`);
	return items;
}

/**
 * Logged since `since` (when the stale subscription was made), compared as instants: a
 * service may render one time in UTC and another with an offset or fractions of a second.
 * A `since` without fractions (the service dropped them) leaves its own second in doubt: an
 * event in it counts when the service tried to deliver it here (it came after the
 * subscription). An event whose time cannot be read counts (caught up rather than lost; a
 * repeat is told by its id).
 */
export function loggedSince(event: { created_at: string }, since: string, sentHere: boolean): boolean {
	const at = Date.parse(event.created_at);
	const from = Date.parse(since);
	if (Number.isNaN(at) || Number.isNaN(from)) return true;
	if (at < from) return false;
	if (!/\.\d/.test(since) && at < from + 1000) return sentHere;
	return true;
}
