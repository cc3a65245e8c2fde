/**
 * One delivery from the clinic's webhook service, checked in order (a failed check starts
 * nothing): 1. body -> else 400; 2. `?event=<key>` names an event this trigger listens for
 * -> else 404; 3. signature over the raw bytes -> else 401 (made with the credential's
 * previous key: resubscribe, resubscribe.ts); 4. a subscription the service stopped ->
 * resubscribe; 5. the events past the trigger's cursor in the log run (runNewEvents.ts), or
 * with Duplicate Check Off the delivery's own body. The node answers refusals and
 * deliveries that start nothing; n8n answers one that starts a run (on 2.x once it stored
 * it). The credential is read once, and kept seconds (memory.ts).
 */
import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { findEvent, fullTopic } from '../shared/catalog';
import { shapeTriggerItems } from '../shared/output';
import { clientFor } from '../shared/transport';
import { EVENT_QUERY_PARAMETER } from '../shared/urls';
import { credentialFor, memoryOf } from './memory';
import { EVENT_LOG_ANSWER_MS } from './newEvents';
import { findStoppedSubscriptions, mayResubscribeUnverified, resubscribe } from './resubscribe';
import { readsEventLog, runNewEvents } from './runNewEvents';
import { DEFAULT_SIGNATURE_HEADER, deliveryIdOf, verifyDelivery } from './signature';
import type { VerificationMode } from './signature';
import { eventsOfOldSigningKey, secretOf, storedSubscriptions } from './storage';

/** Default largest body accepted, in bytes (1 MiB). Clinic payloads are a few KiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export type ParsedBody = { ok: true; body: IDataObject } | { ok: false; reason: 'empty' | 'tooLarge' | 'notJson' | 'notObject' };

/** Reads a delivery body. Empty, larger than the limit, not JSON, or JSON that is not an object: refused with the reason. */
export function parseDeliveryBody(raw: Buffer, maxBytes = DEFAULT_MAX_BODY_BYTES): ParsedBody {
	if (raw.length > maxBytes) return { ok: false, reason: 'tooLarge' };
	const text = raw.toString('utf8').trim();
	if (text === '') return { ok: false, reason: 'empty' };
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch {
		return { ok: false, reason: 'notJson' };
	}
	return parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) ? { ok: false, reason: 'notObject' } : { ok: true, body: parsed as IDataObject };
}

const BODY_PROBLEMS: Record<Exclude<ParsedBody, { ok: true }>['reason'], string> = {
	empty: 'Empty body: a JSON object was expected',
	tooLarge: 'Body too large',
	notJson: 'Body is not JSON',
	notObject: 'Body is JSON but not an object',
};

/** The payload: the service wraps most as `{"value": {...}}`; a body without `value` is the payload itself. */
export function unwrapPayload(body: IDataObject): unknown {
	return Object.prototype.hasOwnProperty.call(body, 'value') ? body.value : body;
}

/** The node's own answer to a delivery that starts nothing (n8n then saves what webhook() changed in static data). */
function refuse(ctx: IWebhookFunctions, status: number, body: IDataObject): IWebhookResponseData {
	ctx.getResponseObject().status(status).json(body);
	return { noWebhookResponse: true };
}

const numberOption = (value: unknown, fallback: number) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback);

/**
 * The bytes as received. n8n puts them on `rawBody` for every node but its own Webhook
 * node; when they are missing they are read now, and as a last resort rebuilt from the
 * parsed body (a signature computed over other bytes will then not match).
 */
async function rawBodyOf(ctx: IWebhookFunctions): Promise<Buffer> {
	const req = ctx.getRequestObject();
	if (!Buffer.isBuffer(req.rawBody) && typeof req.readRawBody === 'function') await req.readRawBody();
	if (Buffer.isBuffer(req.rawBody)) return req.rawBody;
	const body: unknown = req.body;
	if (body === undefined || body === null || body === '') return Buffer.alloc(0);
	return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
}

export async function receiveDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const arrived = Date.now();
	const raw = await rawBodyOf(this);
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const node = this.getNode();

	// 1. The body.
	const parsed = parseDeliveryBody(raw, Math.floor(numberOption(options.maxBodySizeKb, DEFAULT_MAX_BODY_BYTES / 1024) * 1024));
	if (!parsed.ok) return refuse(this, 400, { error: BODY_PROBLEMS[parsed.reason] });

	// 2. The event, named by the address since the body does not.
	const query = this.getQueryData() as IDataObject;
	const key = typeof query[EVENT_QUERY_PARAMETER] === 'string' ? (query[EVENT_QUERY_PARAMETER] as string) : '';
	const event = findEvent(key);
	const selected = this.getNodeParameter('events', []) as unknown;
	if (!event || !Array.isArray(selected) || !selected.includes(key)) return refuse(this, 404, { error: 'This trigger does not listen for this event' });

	// 3. The proof, over the raw bytes, with the secret derived from the credential's signing
	//    key; a delivery the kept credential does not verify is checked again with it as saved.
	const trigger = [this.getWorkflow().id ?? '', node.name, this.getMode()].join('\n');
	const memory = memoryOf(trigger);
	const stored = storedSubscriptions(this.getWorkflowStaticData('node'));
	const subscription = stored.get(key);
	const mode = (options.verification as VerificationMode | undefined) ?? 'hmacSha256';
	const check = async (fresh: boolean) => {
		let earlier = false;
		const readCredentials = async (type: string) => {
			const credentialKey = [type, node.credentials?.[type]?.id ?? ''].join('\n');
			const read = await credentialFor(memory, credentialKey, arrived, fresh, async () => await this.getCredentials(type));
			earlier ||= read.earlier;
			return read.value;
		};
		// A delivery never waits on a busy service: no Retry-After waits, a short timeout
		// (resubscribing makes a client of its own, with the time the service needs).
		const client = clientFor(this, { timeoutMs: EVENT_LOG_ANSWER_MS, maxRetryWaitMs: 0, readCredentials });
		const signingKey = stored.size > 0 ? await client.webhookSigningKey() : '';
		const verified = verifyDelivery({
			mode,
			rawBody: raw,
			headers: this.getHeaderData() as Record<string, string | string[] | undefined>,
			headerName: typeof options.signatureHeader === 'string' ? options.signatureHeader : DEFAULT_SIGNATURE_HEADER,
			secret: subscription && mode !== 'none' ? secretOf(node, key, subscription, signingKey) : undefined,
		}).ok;
		return { client, signingKey, verified, earlier };
	};
	let checked = await check(false);
	if (!checked.verified && checked.earlier) checked = await check(true);
	const { client, signingKey, verified } = checked;
	const noKey = subscription && mode !== 'none' && !signingKey && !subscription.legacySecret;
	if (noKey) this.logger.warn(`Clinic Trigger "${node.name}": the credential holds no webhook signing key, so deliveries cannot be verified. Save the credential, then deactivate and activate the workflow.`);
	const oldKeyEvents = eventsOfOldSigningKey(stored, signingKey);
	const bodyOnly = !readsEventLog(options);
	if (!verified) {
		// Subscribed with the previous key: resubscribe (at most once a minute from such
		// deliveries: a forged one looks the same); the log then says what ran meanwhile.
		if (!oldKeyEvents.includes(key) || !mayResubscribeUnverified(trigger)) return refuse(this, 401, { error: 'Unauthorized' });
		await resubscribe(this, { reason: 'signingKeyChanged', keys: oldKeyEvents }, trigger);
		// An unverified body never runs; answering here saves the new subscription.
		if (bodyOnly) return refuse(this, 200, { received: true });
		return await runNewEvents(this, { trigger, client, stored, arrived });
	}

	// 4. A subscription the service stopped (or, without verification, a changed key).
	const stale = oldKeyEvents.length > 0 ? { reason: 'signingKeyChanged' as const, keys: oldKeyEvents } : await findStoppedSubscriptions(this, client, stored, trigger);
	if (stale) await resubscribe(this, stale, trigger);

	// 5. What runs: the log's events past the cursor (what a stopped subscription missed among them).
	if (!bodyOnly) return await runNewEvents(this, { trigger, client, stored, arrived });
	// Only without a stored subscription (verification "none"): the topic from the credential.
	const topic = subscription?.topic || fullTopic((await client.integrationSettings()).topicPrefix, event.suffix);
	const json: IDataObject = { event: event.name, topic, eventId: null, deliveryId: deliveryIdOf(key, raw), receivedAt: new Date().toISOString(), value: unwrapPayload(parsed.body) as IDataObject };
	if (options.includeRawBody === true) json.rawBody = raw.toString('utf8');
	return { workflowData: [shapeTriggerItems(this, [{ json }])] };
}
