/**
 * n8n's webhook hooks for the Clinic Trigger (`webhookMethods.default`): `checkExists` on
 * every activation (and every n8n 1.x start), `create` when it says false, `delete` on
 * deactivation. What they do with the service is in subscriptions.ts.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IHookFunctions } from 'n8n-workflow';

import { findEvent } from '../shared/catalog';
import { isCursor } from '../shared/eventCursor';
import { EventLog } from '../shared/eventLog';
import { clientFor } from '../shared/transport';
import { addressOf, insecureWebhookAddressMessage, isSecureUrl } from '../shared/urls';
import { readsEventLog, startingCursor, triggerFilters } from './newEvents';
import { isCurrent, secretOf, storeSubscription, storedSubscriptions, triggerIdOf } from './storage';
import type { StoredSubscription } from './storage';
import { subscriptionError } from './subscriptionErrors';
import { eventOfSubscription, listedAtAddress, removeOurs, sameId, secretAgrees, selectedEventKeys, subscribe } from './subscriptions';
import type { Setup } from './subscriptions';

type HookSetup = Setup & { options: IDataObject };

/** What a hook reads from n8n, once: one client serves all its requests. */
function setupOf(ctx: IHookFunctions): HookSetup {
	return {
		node: ctx.getNode(),
		client: clientFor(ctx),
		staticData: ctx.getWorkflowStaticData('node'),
		webhookUrl: ctx.getNodeWebhookUrl('default') ?? '',
		keys: selectedEventKeys(ctx.getNodeParameter('events', [])),
		logger: ctx.logger,
		options: ctx.getNodeParameter('options', {}) as IDataObject,
	};
}

/** n8n gave this trigger an address, and it is https or the user allowed http for a local test. */
function acceptsAddress({ webhookUrl, options }: HookSetup): boolean {
	return addressOf(webhookUrl) !== '' && (isSecureUrl(webhookUrl) || options.allowInsecureUrl === true);
}

export async function checkExists(ctx: IHookFunctions): Promise<boolean> {
	const setup = setupOf(ctx);
	const { keys, staticData } = setup;
	if (!acceptsAddress(setup) || keys.length === 0 || keys.some((key) => !findEvent(key))) return false;
	const stored = storedSubscriptions(staticData);
	if (stored.size !== keys.length || keys.some((key) => !stored.has(key))) return false;

	const { topicPrefix } = await setup.client.integrationSettings();
	if (!topicPrefix) return false;
	const ours = await listedAtAddress(setup);
	// A stored secret (earlier versions) or another key: `create` replaces the subscriptions.
	const signingKey = await setup.client.webhookSigningKey();
	if ([...stored.values()].some((entry) => !isCurrent(entry, signingKey))) return false;
	// Anything else at our address (a copy, an old secret) is for `create` to clean up.
	if (ours.length !== keys.length) return false;

	const found = new Map<string, StoredSubscription>();
	for (const key of keys) {
		const entry = stored.get(key) as StoredSubscription;
		const secret = secretOf(triggerIdOf(setup.node), key, entry, signingKey);
		const match = ours.find((s) => sameId(s.id, entry.id) && eventOfSubscription(s, topicPrefix)?.key === key && secretAgrees(s, secret));
		if (!match) return false;
		found.set(key, { ...entry, topic: match.event_topic as string });
	}
	for (const [key, entry] of found) storeSubscription(staticData, key, entry);
	return true;
}

export async function create(ctx: IHookFunctions): Promise<boolean> {
	const setup = setupOf(ctx);
	requireAcceptedAddress(setup);
	await setup.client.webhookServiceUrl();
	// Read first: an event logged while subscribing runs with the first delivery.
	const started = await startCursor(setup);
	try {
		await subscribe(setup);
	} catch (error) {
		// A failed activation leaves nothing behind.
		if (started) delete setup.staticData.cursor;
		throw subscriptionError(setup.node, error);
	}
	return true;
}

/**
 * Where the first delivery reads the log on from: its newest events now (true when started
 * here). A cursor already stored stays (n8n 1.x calls `create` again at start): what was
 * logged while n8n was down runs with the first delivery.
 */
async function startCursor({ node, client, keys, staticData, options }: HookSetup): Promise<boolean> {
	if (!readsEventLog(options) || isCursor(staticData.cursor)) return false;
	try {
		staticData.cursor = await startingCursor(new EventLog(node, client), await triggerFilters(keys, new Map(), client));
		return true;
	} catch (error) {
		throw new NodeOperationError(node, `The Clinic Trigger cannot start: the event log could not be read (${(error as Error).message})`, {
			description:
				"The trigger reads the service's event log to know which events are new. Check that the Clinic credential can read events (its Test button, or the Clinic node's Event > Get Many), then activate again; or set Options > Duplicate Check to Off.",
		});
	}
}

/**
 * True once nothing of this trigger is left at the service (a 404 counts: already gone);
 * anything else (5xx, timeout, lost connection) is thrown, never answered false: n8n
 * ignores the answer, 2.41 retries a throw (not a UserError) and 1.x keeps the ids recorded
 * for the next activation. The webhook service address is asked first, so that
 * deactivation names a missing one plainly.
 */
export async function deleteSubscriptions(ctx: IHookFunctions): Promise<boolean> {
	const setup = setupOf(ctx);
	await setup.client.webhookServiceUrl();
	const { errors } = await removeOurs(setup);
	if (errors.length > 0) {
		const after = `${errors.length} problem(s): the ones not removed stay recorded, and n8n tries again the next time the workflow is activated or deactivated.`;
		throw subscriptionError(setup.node, errors[0], 'Could not remove every webhook subscription of this trigger', after);
	}
	// The next activation starts from now.
	delete setup.staticData.cursor;
	return true;
}

/** n8n's address for this trigger is https, or the user allowed http for a local test. */
function requireAcceptedAddress(setup: HookSetup): void {
	if (acceptsAddress(setup)) return;
	const address = addressOf(setup.webhookUrl);
	if (!address) {
		throw new NodeOperationError(setup.node, 'n8n gave this trigger no webhook address', {
			description: "Set n8n's WEBHOOK_URL to the public https:// address of this n8n and restart it.",
		});
	}
	const { message, description } = insecureWebhookAddressMessage(address);
	throw new NodeOperationError(setup.node, message, { description });
}
