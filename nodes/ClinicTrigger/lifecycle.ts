/** n8n's webhook hooks: `checkExists` at every activation (and 1.x start), `create` when it says false, `delete` at deactivation. */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IHookFunctions } from 'n8n-workflow';

import { LATE_COMMIT_MS, isCursor } from '../shared/eventCursor';
import { EventLog } from '../shared/eventLog';
import { clientFor } from '../shared/transport';
import { addressOf, insecureWebhookAddressMessage, isSecureUrl } from '../shared/urls';
import { readsEventLog, startingCursor, triggerFilters } from './newEvents';
import { storeSubscription, storedSubscriptions } from './storage';
import { reconcilePlan, removeOurs, sameId, selectedEventKeys, subscribe, subscriptionError } from './subscriptions';
import type { Setup } from './subscriptions';

/** What a hook reads from n8n, once, and one client for its requests. */
function hookOf(ctx: IHookFunctions) {
	const events = ctx.getNodeParameter('events', []);
	const setup: Setup = { node: ctx.getNode(), staticData: ctx.getWorkflowStaticData('node'), webhookUrl: ctx.getNodeWebhookUrl('default') ?? '', keys: selectedEventKeys(events) };
	return { setup, client: clientFor(ctx), options: ctx.getNodeParameter('options', {}) as IDataObject };
}

/** n8n gave this trigger an address, and it is https or the user allowed http for a local test. */
const acceptsAddress = (webhookUrl: string, options: IDataObject) => addressOf(webhookUrl) !== '' && (isSecureUrl(webhookUrl) || options.allowInsecureUrl === true);

/** True when one subscription is stored per selected event and the reconcile would keep each as it is (made with the current signing key) and remove nothing; anything else is for `create`. */
async function checkExists(ctx: IHookFunctions): Promise<boolean> {
	const { setup, client, options } = hookOf(ctx);
	const stored = storedSubscriptions(setup.staticData);
	if (!acceptsAddress(setup.webhookUrl, options) || setup.keys.length === 0 || stored.size !== setup.keys.length) return false;
	const { topicPrefix } = await client.integrationSettings();
	const { kept, toRemove } = await reconcilePlan(setup, client, topicPrefix);
	if (toRemove.length > 0 || [...stored].some(([key, entry]) => !sameId(kept.get(key)?.id ?? '', entry.id))) return false;
	for (const [key, entry] of kept) storeSubscription(setup.staticData, key, entry);
	return true;
}

async function create(ctx: IHookFunctions): Promise<boolean> {
	const { setup, client, options } = hookOf(ctx);
	const { node, staticData } = setup;
	if (!acceptsAddress(setup.webhookUrl, options)) {
		const address = addressOf(setup.webhookUrl);
		if (!address) throw new NodeOperationError(node, 'n8n gave this trigger no webhook address', { description: "Set n8n's WEBHOOK_URL to the public https:// address of this n8n and restart it." });
		const { message, description } = insecureWebhookAddressMessage(address);
		throw new NodeOperationError(node, message, { description });
	}
	await client.webhookServiceUrl();
	// The cursor before subscribing: an event logged meanwhile runs with the first delivery. A stored one stays (1.x calls
	// `create` at every start) unless stopped more than LATE_COMMIT_MS ago (a save or republish is quicker): then from now.
	const saved = staticData.cursor;
	const kept = isCursor(saved) && !(Number(saved.stoppedAt) < Date.now() - LATE_COMMIT_MS);
	if (isCursor(saved)) delete saved.stoppedAt;
	const starts = readsEventLog(options) && !kept;
	if (starts) {
		try {
			// Subscriptions stored without a cursor: activated by a version without cursors, whose deliveries the service's log shows.
			const updatedFrom = storedSubscriptions(staticData).size > 0 ? setup.webhookUrl : undefined;
			staticData.cursor = await startingCursor(new EventLog(node, client), await triggerFilters(setup.keys, new Map(), client), updatedFrom);
		} catch (error) {
			throw new NodeOperationError(node, `The Clinic Trigger cannot start: the event log could not be read (${(error as Error).message})`, {
				description: "The trigger reads the service's event log to know which events are new. Check that the Clinic credential can read events (its Test button, or the Clinic node's Event > Get Many), then activate again; or set Options > Duplicate Check to Off.",
			});
		}
	}
	try {
		await subscribe(setup, client, ctx.logger);
	} catch (error) {
		// A failed activation leaves nothing behind.
		if (starts) delete staticData.cursor;
		throw subscriptionError(node, error);
	}
	return true;
}

/** True once nothing of this trigger is left at the service; else it throws (n8n ignores false; 2.41 retries a throw, 1.x keeps the ids). */
async function deleteSubscriptions(ctx: IHookFunctions): Promise<boolean> {
	const { setup, client } = hookOf(ctx);
	await client.webhookServiceUrl();
	const { errors } = await removeOurs(setup, client);
	if (errors.length > 0) {
		const after = `${errors.length} problem(s): the ones not removed stay recorded, and n8n tries again the next time the workflow is activated or deactivated.`;
		throw subscriptionError(setup.node, errors[0], 'Could not remove every webhook subscription of this trigger', after);
	}
	// An activation within LATE_COMMIT_MS (a save or republish) goes on from the cursor; a later one starts from now.
	if (isCursor(setup.staticData.cursor)) setup.staticData.cursor.stoppedAt = Date.now();
	return true;
}

/** A hook as n8n calls it; what fails is a NodeOperationError that says why (subscriptionError). */
const hook = (run: (ctx: IHookFunctions) => Promise<boolean>) =>
	async function (this: IHookFunctions): Promise<boolean> {
		return await run(this).catch((error: unknown) => {
			throw subscriptionError(this.getNode(), error);
		});
	};

export const webhookMethods = { default: { checkExists: hook(checkExists), create: hook(create), delete: hook(deleteSubscriptions) } };
