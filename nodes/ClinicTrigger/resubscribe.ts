/**
 * A Clinic Trigger that has a stale subscription resubscribes itself where it can, and fails visibly where it
 * cannot. Its subscriptions are stale when:
 *
 * - the credential's webhook signing key is no longer the one its subscriptions were made
 *   with: every delivery would be refused. Told from static data on any delivery.
 * - the service disabled or deleted one of its subscriptions: that event is not delivered
 *   at all, so it is looked for on a delivery of any of the trigger's events (one list of
 *   subscriptions, at most once a minute per trigger and process). n8n gives a webhook node
 *   no timer; a trigger whose only subscription was disabled is replaced by activation
 *   (`checkExists` says false: every 1.x start, every activation).
 *
 * Resubscribing is `subscribe`, as activation does (subscribes with the current key, removes the stale subscriptions at
 * this address, disabled ones included), then one run of the events the stale subscriptions missed, read from the
 * event log, each marked `recovered`. When resubscribing fails the delivery fails: n8n answers
 * 500 (the service retries, and with it the resubscribe), saves a failed execution with the
 * message below and starts the workflow's error workflow.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

import { keptInProcess } from '../../credentials/ClinicProcessMemory';
import { findEvent } from '../shared/catalog';
import { clientFor } from '../shared/transport';
import type { ClinicClient } from '../shared/transport';
import { EventLog } from '../shared/eventLog';
import { WebhookSubscriptions, isLive } from '../shared/webhookSubscriptions';
import type { EventRecord } from '../shared/eventRecord';
import type { RemoteSubscription } from '../shared/webhookSubscriptions';
import { pathOf } from '../shared/urls';
import { claimEvent } from './eventClaims';
import { isCurrent } from './storage';
import type { StoredSubscription } from './storage';
import { subscribe } from './subscriptions';

export type StaleReason = 'signingKeyChanged' | 'subscriptionDisabled' | 'subscriptionDeleted';

const WHAT_HAPPENED: Record<StaleReason, string> = {
	signingKeyChanged: "the credential's webhook signing key changed, so the service's deliveries could not be verified",
	subscriptionDisabled: 'the clinic service disabled the subscription, so it stopped delivering',
	subscriptionDeleted: 'the clinic service deleted the subscription, so it stopped delivering',
};

export interface StaleSubscriptions {
	reason: StaleReason;
	/** Event keys whose stored subscription is stale. */
	keys: string[];
}

/** How often a trigger's subscriptions are listed to find one the service disabled or deleted. */
export const STALE_CHECK_EVERY_MS = 60_000;
const lastStaleChecks = keptInProcess('stale subscription checks', 'one per Clinic Trigger node', new Map<string, number>());

/** Most events one resubscribe catches up per event: the newest are kept. */
export const CATCH_UP_MAX = 100;

/** Events whose stored subscription was made with another signing key than the credential's. */
export function eventsOfOldSigningKey(stored: Map<string, StoredSubscription>, signingKey: string): string[] {
	if (!signingKey) return [];
	return [...stored].filter(([, entry]) => !entry.legacySecret && !isCurrent(entry, signingKey)).map(([key]) => key);
}

/**
 * Whether the trigger has stale subscriptions, and for which events. A failed look finds nothing stale: the
 * delivery goes on as usual.
 */
export async function findStaleSubscriptions(
	ctx: IWebhookFunctions,
	client: ClinicClient,
	stored: Map<string, StoredSubscription>,
	triggerId: string,
	signingKey: string,
): Promise<StaleSubscriptions | undefined> {
	const entries = [...stored].filter(([, entry]) => !entry.legacySecret);
	if (entries.length === 0) return undefined;
	const keyChanged = eventsOfOldSigningKey(stored, signingKey);
	if (keyChanged.length > 0) return { reason: 'signingKeyChanged', keys: keyChanged };

	const now = Date.now();
	if (now - (lastStaleChecks.get(triggerId) ?? 0) < STALE_CHECK_EVERY_MS) return undefined;
	lastStaleChecks.set(triggerId, now);
	let listed: RemoteSubscription[];
	try {
		listed = await new WebhookSubscriptions(client, () => ctx.getNode()).list();
	} catch (error) {
		ctx.logger.warn(`Clinic Trigger "${ctx.getNode().name}": could not list its subscriptions (${(error as Error).message})`);
		return undefined;
	}
	const stale = entries
		.map(([key, entry]) => ({ key, subscription: listed.find((s) => String(s.id) === String(entry.id)) }))
		.filter(({ subscription }) => !subscription || !isLive(subscription));
	if (stale.length === 0) return undefined;
	const deleted = stale.some(({ subscription }) => !subscription || subscription.deleted_at);
	return { reason: deleted ? 'subscriptionDeleted' : 'subscriptionDisabled', keys: stale.map(({ key }) => key) };
}

/**
 * Subscribes again and returns the missed events as items (one per event, oldest first).
 * Throws a NodeOperationError that says what happened and what was done when it cannot.
 */
export async function resubscribe(
	ctx: IWebhookFunctions,
	stale: StaleSubscriptions,
	stored: Map<string, StoredSubscription>,
	triggerKeyOf: (eventKey: string) => string,
): Promise<INodeExecutionData[]> {
	const node = ctx.getNode();
	const what = WHAT_HAPPENED[stale.reason];
	const client = clientFor(ctx);
	let listed: RemoteSubscription[];
	try {
		// When the stale subscriptions were made: the catch-up starts there.
		listed = await new WebhookSubscriptions(client, () => node).list();
		await subscribe(ctx);
	} catch (error) {
		throw new NodeOperationError(node, `The Clinic Trigger cannot receive events: ${what}. Subscribing again failed: ${(error as Error).message}`, {
			description:
				"n8n tries again with the service's next delivery. Check that the Clinic credential can sign in and manage webhooks, then deactivate and activate the workflow; meanwhile the Clinic Event Log Trigger or the Clinic node's Event > Get Many lists the events.",
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
			.filter((record) => (since ? loggedSince(record, since, sentTo(record, ownPath)) : sentTo(record, ownPath)) && !heardAt(record, ownPath))
			.sort((a, b) => a.id - b.id)
			.filter((record) => claimEvent(triggerKeyOf(key), record.id));
		for (const record of missed) {
			items.push({
				json: {
					event: event.name,
					topic: entry.topic,
					eventId: record.id,
					createdAt: record.created_at,
					deliveryId: null,
					receivedAt: new Date().toISOString(),
					value: record.value,
					recovered,
				},
			});
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

function deliveriesTo(event: EventRecord, path: string): IDataObject[] {
	return (event.logs ?? []).filter((log) => pathOf(String(log.target_url ?? '')) === path);
}

function sentTo(event: EventRecord, path: string): boolean {
	return deliveriesTo(event, path).length > 0;
}

/** The event reached this trigger: a delivery to its address was answered 2xx. */
function heardAt(event: EventRecord, path: string): boolean {
	return deliveriesTo(event, path).some(
		(log) => typeof log.response_code === 'number' && log.response_code >= 200 && log.response_code < 300,
	);
}
