/**
 * n8n's webhook hooks for the Clinic Trigger (`webhookMethods.default`): `checkExists` on
 * every activation (and every n8n 1.x start), `create` when it says false, `delete` on
 * deactivation, and the checks made first. What they do with the service is in subscriptions.ts.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IHookFunctions } from 'n8n-workflow';

import { findEvent } from '../shared/catalog';
import { isLive } from '../shared/webhookSubscriptions';
import { clientFor } from '../shared/transport';
import { addressOf, insecureWebhookAddressMessage, isSecureUrl } from '../shared/urls';
import { isCurrent, secretOf, storeSubscription, storedSubscriptions } from './storage';
import type { StoredSubscription } from './storage';
import { activationError, removalError } from './subscriptionErrors';
import { isCursor } from '../shared/eventCursor';
import { EventLog } from '../shared/eventLog';
import { readsEventLog, startingCursor, triggerFilters } from './runNewEvents';
import { eventOfSubscription, readSetup, removeOurs, sameId, secretAgrees, selectedEventKeys, subscribe, topicPrefixOf } from './subscriptions';

/** n8n gave this trigger an address, and it is https or the user allowed http for a local test. */
export function acceptsAddress(ctx: IHookFunctions): boolean {
	const webhookUrl = ctx.getNodeWebhookUrl('default') ?? '';
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	return addressOf(webhookUrl) !== '' && (isSecureUrl(webhookUrl) || options.allowInsecureUrl === true);
}

export async function checkExists(this: IHookFunctions): Promise<boolean> {
	if (!acceptsAddress(this)) return false;
	const setup = readSetup(this);
	const keys = selectedEventKeys(this);
	if (keys.length === 0 || keys.some((key) => !findEvent(key))) return false;
	const stored = storedSubscriptions(setup.staticData);
	if (stored.size !== keys.length || keys.some((key) => !stored.has(key))) return false;

	const topicPrefix = await topicPrefixOf(setup);
	if (!topicPrefix) return false;
	const ours = (await setup.subscriptions.list()).filter((s) => isLive(s) && addressOf(s.url) === setup.address);
	// A stored secret (earlier versions) or another key: `create` replaces the subscriptions.
	const signingKey = await setup.client.webhookSigningKey();
	if ([...stored.values()].some((entry) => !isCurrent(entry, signingKey))) return false;
	// Anything else at our address (a copy, an old secret) is for `create` to clean up.
	if (ours.length !== keys.length) return false;

	const found = new Map<string, StoredSubscription>();
	for (const key of keys) {
		const entry = stored.get(key) as StoredSubscription;
		const secret = secretOf(setup.node, key, entry, signingKey);
		const match = ours.find((s) => sameId(s.id, entry.id) && eventOfSubscription(s, topicPrefix)?.key === key && secretAgrees(s, secret));
		if (!match) return false;
		found.set(key, { ...entry, topic: match.event_topic as string });
	}
	for (const [key, entry] of found) storeSubscription(setup.staticData, key, entry);
	return true;
}

export async function create(this: IHookFunctions): Promise<boolean> {
	// Read first: an event logged while subscribing runs with the first delivery.
	const started = await startCursor(this);
	try {
		await subscribe(this);
	} catch (error) {
		// A failed activation leaves nothing behind.
		if (started) delete this.getWorkflowStaticData('node').cursor;
		throw activationError(this.getNode(), error);
	}
	return true;
}

/**
 * Where the first delivery reads the log on from: the log's newest events now (true when
 * started here). A cursor already stored stays (n8n 1.x calls `create` again at start): what was logged while n8n
 * was down runs with the first delivery.
 */
async function startCursor(ctx: IHookFunctions): Promise<boolean> {
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	const staticData = ctx.getWorkflowStaticData('node');
	if (!readsEventLog(options) || isCursor(staticData.cursor)) return false;
	const client = clientFor(ctx);
	try {
		const filters = await triggerFilters(selectedEventKeys(ctx), new Map(), client);
		staticData.cursor = await startingCursor(new EventLog(ctx, client), filters);
		return true;
	} catch (error) {
		throw new NodeOperationError(ctx.getNode(), `The Clinic Trigger cannot start: the event log could not be read (${(error as Error).message})`, {
			description:
				"The trigger reads the service's event log to know which events are new. Check that the Clinic credential can read events (its Test button, or the Clinic node's Event > Get Many), then activate again; or set Options > Duplicate Check to Off.",
		});
	}
}

export async function deleteSubscriptions(this: IHookFunctions): Promise<boolean> {
	const setup = readSetup(this);
	const { errors } = await removeOurs(setup);
	if (errors.length > 0) throw removalError(setup.node, errors);
	// The next activation starts from now.
	delete setup.staticData.cursor;
	return true;
}

/**
 * The credential has a webhook service address (asked first, so that deactivation says so
 * plainly; the message names the fix, the only part n8n shows in its toast).
 */
export async function requireWebhookService(ctx: IHookFunctions): Promise<void> {
	await clientFor(ctx).webhookServiceUrl();
}

/** n8n's address for this trigger is https, or the user allowed http for a local test. */
export function requireAcceptedAddress(ctx: IHookFunctions): void {
	if (acceptsAddress(ctx)) return;
	const address = addressOf(ctx.getNodeWebhookUrl('default'));
	if (!address) {
		throw new NodeOperationError(ctx.getNode(), 'n8n gave this trigger no webhook address', {
			description: "Set n8n's WEBHOOK_URL to the public https:// address of this n8n and restart it.",
		});
	}
	const { message, description } = insecureWebhookAddressMessage(address);
	throw new NodeOperationError(ctx.getNode(), message, { description });
}
