/**
 * A stale subscription (made with a signing key the credential no longer holds, or disabled
 * or deleted by the service: listed at most once a minute per trigger), replaced from a
 * delivery: the new one made and stored, then the stale one removed; every working one
 * stays. The events it missed run from the event log, marked `recovered`. One at a time per
 * trigger; unverified deliveries start at most one a minute (a forged one looks the same).
 * A failure fails the delivery with what to do; the next delivery tries again.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

import { findEvent } from '../shared/catalog';
import type { CatalogEvent } from '../shared/catalog';
import { EventLog } from '../shared/eventLog';
import type { EventRecord } from '../shared/eventRecord';
import type { ClinicClient } from '../shared/transport';
import { callbackUrl } from '../shared/urls';
import { WebhookSubscriptions, isLive } from '../shared/webhookSubscriptions';
import type { RemoteSubscription } from '../shared/webhookSubscriptions';
import { claimCaughtUp, ranAt, triesAt } from './duplicateCheck';
import { triggers } from './memory';
import type { TriggerState } from './memory';
import { subscriptionSecret, signingKeyId } from './signature';
import { storeSubscription, triggerIdOf } from './storage';
import type { StoredSubscription } from './storage';

export type StaleSubscriptions = NonNullable<TriggerState['stale']>;

const WHAT_HAPPENED: Record<StaleSubscriptions['reason'], string> = {
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
	const state = stateOf(trigger);
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
	state.since = Object.fromEntries(found.map(({ key, subscription }) => [key, subscription?.created_at ? String(subscription.created_at) : undefined]));
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
	/** The path of this trigger's webhook address (the service logs each try's `target_url`). */
	ownPath: string;
}

/**
 * Subscribes again and returns the missed events as items (one per event, oldest first);
 * none when another delivery of this trigger is resubscribing (this one waits for it).
 * Throws a NodeOperationError that says what happened and what to do when it cannot.
 */
export async function resubscribe(
	ctx: IWebhookFunctions,
	stale: StaleSubscriptions,
	stored: Map<string, StoredSubscription>,
	by: Resubscribing,
): Promise<INodeExecutionData[]> {
	const state = stateOf(by.trigger);
	if (state.resubscribing) {
		await state.resubscribing.catch(() => undefined);
		return [];
	}
	const running = resubscribeNow(ctx, state, stale, stored, by);
	state.resubscribing = running;
	try {
		return await running;
	} catch (error) {
		// A stopped subscription that cannot be replaced fails one delivery a minute; the
		// deliveries of the working ones meanwhile run (the n8n log says it failed again).
		if (stale.reason === 'signingKeyChanged' || Date.now() - (state.failedAt ?? 0) >= STALE_CHECK_EVERY_MS) {
			state.failedAt = Date.now();
			// The same NodeOperationError resubscribeNow threw (n8n-workflow hands it back).
			throw new NodeOperationError(ctx.getNode(), error as Error);
		}
		ctx.logger.warn(`Clinic Trigger "${ctx.getNode().name}": ${(error as Error).message}`);
		return [];
	} finally {
		state.resubscribing = undefined;
	}
}

/** A stale subscription's replacement; `id` once the service made it. */
type Replacement = { key: string; event: CatalogEvent; entry: StoredSubscription; secret: string; id?: number | string };

async function resubscribeNow(
	ctx: IWebhookFunctions,
	state: TriggerState,
	stale: StaleSubscriptions,
	stored: Map<string, StoredSubscription>,
	{ trigger, client, signingKey, ownPath }: Resubscribing,
): Promise<INodeExecutionData[]> {
	const node = ctx.getNode();
	const what = WHAT_HAPPENED[stale.reason];
	if (!signingKey) throw new NodeOperationError(node, 'The Clinic credential holds no webhook signing key: open it, click Save, then deactivate and activate the workflow');
	const replacements: Replacement[] = stale.keys.flatMap((key) => {
		const event = findEvent(key);
		const entry = stored.get(key);
		return event && entry ? [{ key, event, entry, secret: subscriptionSecret(signingKey, triggerIdOf(node), key) }] : [];
	});

	// At the service: each new subscription made before its stale one goes, then the log read.
	const subscriptions = new WebhookSubscriptions(client, () => node);
	const logged = new Map<string, EventRecord[]>();
	let listed: RemoteSubscription[] = [];
	let failure: { error: Error; subscribing: boolean } | undefined;
	try {
		listed = await subscriptions.list();
		for (const made of replacements) {
			const url = callbackUrl(ctx.getNodeWebhookUrl('default') ?? '', made.key);
			made.id = await subscriptions.subscribe({ url, topic: made.entry.topic, eventName: made.event.name, secret: made.secret }, `The subscription to ${made.event.label}`);
			// A stale subscription that cannot be removed is left for activation to clean up.
			await subscriptions.removeIfPresent(made.entry.id).catch(() => false);
		}
		const log = new EventLog(ctx, client);
		for (const made of replacements) logged.set(made.key, await log.recent({ topic: made.entry.topic, name: made.event.name }, CATCH_UP_MAX));
	} catch (error) {
		failure = { error: error as Error, subscribing: replacements.some((made) => made.id === undefined) };
	}

	// Here: what was made is stored, whatever failed after it.
	for (const made of replacements) {
		if (made.id !== undefined) storeSubscription(ctx.getWorkflowStaticData('node'), made.key, { id: made.id, topic: made.entry.topic, keyId: signingKeyId(signingKey) });
	}
	const notMade = replacements.filter((made) => made.id === undefined).map((made) => made.key);
	state.stale = notMade.length > 0 ? { reason: stale.reason, keys: notMade } : undefined;
	// Made now: when, the next list tells.
	for (const made of replacements) if (made.id !== undefined) delete state.since?.[made.key];
	if (failure?.subscribing) {
		throw new NodeOperationError(node, `The Clinic Trigger cannot receive events: ${what}. Subscribing again failed: ${failure.error.message}`, {
			description:
				"Its other subscriptions were left in place, and the next delivery to this trigger subscribes again (one that cannot be verified, at most once a minute). If this keeps failing, check that the Clinic credential can sign in and manage webhooks, then deactivate and activate the workflow. Meanwhile the Clinic Event Log Trigger, or the Clinic node's Event > Get Many, lists the events.",
		});
	}
	const findThem = "Find them with the Clinic node's Event > Get Many, or the Clinic Event Log Trigger.";
	if (failure) throw new NodeOperationError(node, `The Clinic Trigger subscribed again (${what}), but could not read the events missed meanwhile: ${failure.error.message}`, { description: findThem });

	const recovered: IDataObject = {
		reason: stale.reason,
		message: `Caught up from the event log: ${what}. The trigger subscribed again with the credential's current key.`,
	};
	const items: INodeExecutionData[] = [];
	for (const { key, event, entry } of replacements) {
		// Since the stale subscription was made; when the service no longer lists it, only
		// what it tried to deliver here: older events were never this trigger's.
		const since = String(listed.find((s) => String(s.id) === String(entry.id))?.created_at ?? '');
		const missed = (logged.get(key) ?? [])
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
 * Logged since `since`, compared as instants (UTC, offsets, fractions alike). Within the
 * second a `since` without fractions names, an event counts when the service tried to
 * deliver it here; an event whose time cannot be read counts (caught up rather than lost).
 */
export function loggedSince(event: { created_at: string }, since: string, sentHere: boolean): boolean {
	const at = Date.parse(event.created_at);
	const from = Date.parse(since);
	if (Number.isNaN(at) || Number.isNaN(from)) return true;
	if (at < from) return false;
	if (!/\.\d/.test(since) && at < from + 1000) return sentHere;
	return true;
}
