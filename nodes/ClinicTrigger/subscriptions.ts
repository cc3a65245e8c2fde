/**
 * The trigger's subscriptions on the clinic's webhook service, following the workflow's
 * life (n8n calls these from `webhookMethods.default`):
 *
 * - `create` lists what already points at this node's address first, keeps what it can
 *   prove is its own (stored, or listed with the secret it derives: another main's),
 *   subscribes each missing event with its own secret, then removes the rest (so a
 *   replaced subscription goes only once its replacement exists), then keeps one
 *   subscription per event should another main have subscribed at the same moment. If one subscription fails it removes what
 *   this attempt holds and throws: n8n 1.x would otherwise orphan them, and a half-active
 *   trigger silently misses events.
 * - `checkExists` is true only when every selected event has a live subscription at this
 *   node's address whose id and secret are stored, and nothing else points there. It
 *   never deletes: a false answer makes n8n call `create`, which cleans up.
 * - `delete` removes every stored subscription (404 counts as removed) and sweeps what is
 *   still live at this node's address.
 *
 * What is stored, and how secrets are derived, is in storage.ts. Entries stored by 0.1.0
 * are replaced when `checkExists` (every n8n 1.x start, every activation) says false.
 * Secrets never reach errors or logs.
 */
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IHookFunctions, INode, IWebhookFunctions, JsonObject } from 'n8n-workflow';

import { EVENTS, describeTopicPrefixProblem, findEvent, fullTopic } from '../shared/catalog';
import { signingKeyId, subscriptionSecret } from '../shared/signature';
import type { CatalogEvent } from '../shared/catalog';
import { ClinicClient } from '../shared/transport';
import { WebhookSubscriptions, idFromCreateAnswer, isLive } from '../shared/webhookSubscriptions';
import type { RemoteSubscription } from '../shared/webhookSubscriptions';
import {
	forgetSubscription,
	isCurrent,
	secretOf,
	storeSubscription,
	storedSubscriptions,
	triggerIdOf,
} from './storage';
import type { StoredSubscription } from './storage';
import type { IntegrationCredentialType } from '../shared/transport';

export { EVENT_QUERY_PARAMETER, addressOf, callbackUrl, eventKeyOfUrl, isSecureUrl, pathOf } from '../shared/urls';
import { addressOf, callbackUrl, eventKeyOfUrl, isSecureUrl, pathOf, sameUrl } from '../shared/urls';

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
function secretAgrees(subscription: RemoteSubscription, secret: string | undefined): boolean {
	const listed = subscription.authentication_data?.secret;
	return typeof listed !== 'string' || listed === secret;
}

function sameId(a: number | string, b: number | string): boolean {
	return String(a) === String(b);
}

// ---- requests ---------------------------------------------------------------------

function httpCodeOf(error: unknown): string {
	const code = (error as { httpCode?: unknown } | null)?.httpCode;
	return typeof code === 'string' ? code : '';
}

function messageOf(error: unknown): string {
	const message = (error as { message?: unknown } | null)?.message;
	return typeof message === 'string' && message ? message : 'unknown error';
}

function descriptionOf(error: unknown): string {
	const description = (error as { description?: unknown } | null)?.description;
	return typeof description === 'string' ? description : '';
}

/** The trigger's use of the webhook-service client: its words for errors, a 404 on removal counts as removed. */
class Subscriptions {
	private readonly service: WebhookSubscriptions;

	constructor(
		client: ClinicClient,
		private readonly node: INode,
	) {
		this.service = new WebhookSubscriptions(client, () => node);
	}

	async list(): Promise<RemoteSubscription[]> {
		return await this.service.list();
	}

	/** Removes one subscription; true when removed now, false when it was already gone (404). */
	async remove(id: number | string): Promise<boolean> {
		try {
			await this.service.remove(id);
			return true;
		} catch (error) {
			if (httpCodeOf(error) === '404') return false;
			throw new NodeApiError(this.node, { message: messageOf(error) } as JsonObject, {
				message: `Could not remove webhook subscription ${String(id)}: ${messageOf(error)}`,
				description: descriptionOf(error),
				httpCode: httpCodeOf(error) || undefined,
			});
		}
	}

	async create(event: CatalogEvent, url: string, topic: string, secret: string): Promise<number | string> {
		const answer = await this.service.create({ url, topic, eventName: event.name, secret }, `The subscription to ${event.label}`);
		const id = idFromCreateAnswer(answer);
		if (id !== undefined) return id;
		// The answer body is not documented: find the new subscription by address, topic and secret.
		const created = (await this.list())
			.filter(
				(s) =>
					isLive(s) &&
					sameUrl(s.url ?? '', url) &&
					s.event_topic === topic &&
					s.event_name === event.name &&
					(s.authentication_data?.secret === undefined || s.authentication_data.secret === secret),
			)
			.pop();
		if (created) return created.id;
		throw new NodeApiError(this.node, { message: 'Subscription id not found' } as JsonObject, {
			message: 'The webhook service accepted the subscription but did not say its id, and it is not in the list',
		});
	}
}

/**
 * What n8n shows when activation fails. n8n 1.x shows only the description of a
 * NodeApiError (workflow.service.ts), which would hide which event failed and what the
 * service answered; a NodeOperationError's message is shown by 1.x and 2.x alike.
 */
export function activationError(node: INode, error: unknown): NodeOperationError {
	if (error instanceof NodeOperationError) return error;
	return new NodeOperationError(node, messageOf(error), { description: descriptionOf(error) || undefined });
}

// ---- the lifecycle ----------------------------------------------------------------

interface Setup {
	node: INode;
	client: ClinicClient;
	subscriptions: Subscriptions;
	staticData: IDataObject;
	/** The node's webhook URL (production or test), without query. */
	webhookUrl: string;
	address: string;
}

/** Activation (n8n's hooks) or resubscribing (a delivery): both subscribe with what either offers. */
type SubscribingContext = IHookFunctions | IWebhookFunctions;

function readSetup(ctx: SubscribingContext): Setup {
	const node = ctx.getNode();
	const authentication = ctx.getNodeParameter('authentication', 'clinicApi') as IntegrationCredentialType;
	const webhookUrl = ctx.getNodeWebhookUrl('default') ?? '';
	const client = new ClinicClient(ctx, authentication);
	return {
		node,
		client,
		subscriptions: new Subscriptions(client, node),
		staticData: ctx.getWorkflowStaticData('node'),
		webhookUrl,
		address: addressOf(webhookUrl),
	};
}

/** n8n gave this trigger an address, and it is https or the user allowed http for a local test. */
export function acceptsAddress(ctx: IHookFunctions): boolean {
	const webhookUrl = ctx.getNodeWebhookUrl('default') ?? '';
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	return addressOf(webhookUrl) !== '' && (isSecureUrl(webhookUrl) || options.allowInsecureUrl === true);
}

/** The selected events; unknown keys (from an older catalog) are reported by `create`. */
function selectedEventKeys(ctx: SubscribingContext): string[] {
	const value = ctx.getNodeParameter('events', []) as unknown;
	const keys = Array.isArray(value) ? value.map(String) : [];
	return [...new Set(keys)];
}

async function topicPrefixOf(setup: Setup): Promise<string> {
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
		const match = ours.find(
			(s) =>
				sameId(s.id, entry.id) &&
				eventOfSubscription(s, topicPrefix)?.key === key &&
				secretAgrees(s, secretOf(setup.node, key, entry, signingKey)),
		);
		if (!match) return false;
		found.set(key, { ...entry, topic: match.event_topic as string });
	}
	for (const [key, entry] of found) storeSubscription(setup.staticData, key, entry);
	return true;
}

export async function create(this: IHookFunctions): Promise<boolean> {
	await subscribe(this);
	return true;
}

/**
 * What `create` does, for resubscribing too. The node checked the address and the webhook
 * service address first (preflight.ts).
 */
export async function subscribe(ctx: SubscribingContext): Promise<void> {
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
			const id = await subscriptions.create(event, callbackUrl(setup.webhookUrl, event.key), topic, secret);
			storeSubscription(staticData, event.key, { id, topic, keyId });
			subscribed = true;
		} catch (error) {
			const leftovers = await rollBack(setup);
			throw subscribeError(setup.node, event, error, leftovers);
		}
	}

	// 3. Remove what is not ours, or replaced; forget events no longer selected.
	try {
		for (const subscription of toRemove) await subscriptions.remove(subscription.id);
	} catch (error) {
		// Never half-active: what this attempt holds goes too, and activation fails.
		await rollBack(setup);
		throw activationError(setup.node, error);
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

async function convergeWithOtherMains(
	setup: Setup,
	events: CatalogEvent[],
	topicPrefix: string,
	signingKey: string,
): Promise<void> {
	const live = (await setup.subscriptions.list()).filter((s) => isLive(s) && addressOf(s.url) === setup.address);
	for (const event of events) {
		const same = live
			.filter((s) => eventOfSubscription(s, topicPrefix)?.key === event.key && provesOurSecret(s, setup.node, event.key, signingKey))
			.sort((a, b) => compareIds(a.id, b.id));
		if (same.length < 2) continue;
		const [keep, ...extra] = same;
		for (const subscription of extra) await setup.subscriptions.remove(subscription.id);
		storeSubscription(setup.staticData, event.key, {
			id: keep.id,
			topic: keep.event_topic as string,
			keyId: signingKeyId(signingKey),
		});
	}
}

function compareIds(a: number | string, b: number | string): number {
	const [x, y] = [Number(a), Number(b)];
	if (Number.isFinite(x) && Number.isFinite(y)) return x - y;
	return String(a).localeCompare(String(b));
}

/**
 * Removes every subscription this attempt holds (stored ones and anything live at our
 * address, which covers a POST whose answer was lost). Returns the ids that could not be
 * removed; they stay in static data so `delete` can try again.
 */
async function rollBack(setup: Setup): Promise<string[]> {
	const { subscriptions, staticData } = setup;
	const failed: string[] = [];
	for (const [key, entry] of storedSubscriptions(staticData)) {
		try {
			await subscriptions.remove(entry.id);
			forgetSubscription(staticData, key);
		} catch {
			failed.push(String(entry.id));
		}
	}
	try {
		const stray = (await subscriptions.list()).filter(
			(s) => isLive(s) && addressOf(s.url) === setup.address && !failed.includes(String(s.id)),
		);
		for (const subscription of stray) {
			try {
				await subscriptions.remove(subscription.id);
			} catch {
				failed.push(String(subscription.id));
			}
		}
	} catch {
		// The list itself failed: the stored ids above were all this attempt knew of.
	}
	return failed;
}

function subscribeError(node: INode, event: CatalogEvent, error: unknown, leftovers: string[]): NodeApiError {
	const message = `Could not subscribe to "${event.label}": ${messageOf(error)}`;
	const cleanup = leftovers.length
		? `Subscription(s) ${leftovers.join(', ')} could not be removed; n8n will try again when the workflow is deactivated, or remove them with the Clinic node.`
		: 'The subscriptions made for this trigger were removed again, so it is not half-active.';
	const description = [descriptionOf(error), cleanup].filter(Boolean).join(' ');
	const httpCode = httpCodeOf(error) || undefined;
	return new NodeApiError(node, { message, description, ...(httpCode ? { httpCode } : {}) } as JsonObject, {
		message,
		description,
		httpCode,
	});
}

export async function deleteSubscriptions(this: IHookFunctions): Promise<boolean> {
	const setup = readSetup(this);
	const { subscriptions, staticData } = setup;
	const errors: unknown[] = [];
	for (const [key, entry] of storedSubscriptions(staticData)) {
		try {
			await subscriptions.remove(entry.id);
			forgetSubscription(staticData, key);
		} catch (error) {
			errors.push(error);
		}
	}
	if (setup.address) {
		try {
			const stray = (await subscriptions.list()).filter((s) => isLive(s) && addressOf(s.url) === setup.address);
			for (const subscription of stray) {
				try {
					await subscriptions.remove(subscription.id);
				} catch (error) {
					errors.push(error);
				}
			}
		} catch (error) {
			errors.push(error);
		}
	}
	if (errors.length > 0) {
		const first = errors[0];
		const message = `Could not remove every webhook subscription of this trigger: ${messageOf(first)}`;
		const description = `${errors.length} problem(s). ${descriptionOf(first)} The ones not removed stay recorded, and n8n tries again the next time the workflow is activated or deactivated.`.trim();
		throw new NodeApiError(setup.node, { message, description } as JsonObject, {
			message,
			description,
			httpCode: httpCodeOf(first) || undefined,
		});
	}
	return true;
}
