/**
 * One delivery from the clinic's webhook service, checked in order (a failed check starts
 * nothing): 1. body -> else 400; 2. `?event=<key>` names an event this trigger listens for
 * -> else 404; 3. signature over the raw bytes -> else 401 (made with the credential's
 * previous key: resubscribe, resubscribe.ts); 4. a subscription the service stopped ->
 * resubscribe; 5. a repeat -> 200 without a run (duplicateCheck.ts, or the same body within
 * the window). The node answers refusals and repeats; n8n answers an accepted delivery (on
 * 2.x once it stored the run). The credential is read once, and kept seconds (memory.ts).
 */
import type { ICredentialDataDecryptedObject, IDataObject, INodeExecutionData, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { findEvent, fullTopic } from '../shared/catalog';
import { shapeTriggerItems } from '../shared/output';
import { clientFor } from '../shared/transport';
import { EVENT_QUERY_PARAMETER, pathOf } from '../shared/urls';
import { DEFAULT_DUPLICATE_WINDOW_MINUTES } from './description';
import type { DuplicateCheck } from './description';
import { EVENT_LOG_CHECK_MS, EVENT_LOG_READ_MS, REPEAT_ANSWER, placeDelivery } from './duplicateCheck';
import { MAX_WINDOW_MS, credentials, taken } from './memory';
import { findStoppedSubscriptions, mayResubscribeUnverified, resubscribe, subscribedSince } from './resubscribe';
import { DEFAULT_SIGNATURE_HEADER, deliveryIdOf, sha256Hex, verifyDelivery } from './signature';
import type { VerificationMode } from './signature';
import { eventsOfOldSigningKey, secretOf, storedSubscriptions } from './storage';
import { runNewEvents } from './runNewEvents';

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

/** The node's own answer to a delivery that starts nothing. */
function refuse(ctx: IWebhookFunctions, status: number, body: IDataObject): IWebhookResponseData {
	ctx.getResponseObject().status(status).json(body);
	return { noWebhookResponse: true };
}

/** The node's own answer, and a run of `items` if any. Answering itself makes n8n 2.x save the static data resubscribing changed. */
function answer(ctx: IWebhookFunctions, status: number, body: IDataObject, items: INodeExecutionData[]): IWebhookResponseData {
	ctx.getResponseObject().status(status).json(body);
	return items.length > 0 ? { noWebhookResponse: true, workflowData: [shapeTriggerItems(ctx, items)] } : { noWebhookResponse: true };
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

/** The credential: the one read in the last CREDENTIAL_KEPT_MS, or with `fresh` one read after the delivery `arrived`. */
async function credentialFor(key: string, arrived: number, fresh: boolean, read: () => Promise<ICredentialDataDecryptedObject>) {
	const kept = credentials.get(key);
	// Same instant: counted as before the arrival (one read too many rather than a stale one).
	if (kept && (!fresh || kept.startedAt > arrived)) return { value: await kept.read, earlier: kept.startedAt <= arrived };
	const entry = { read: read(), startedAt: performance.now() };
	credentials.set(key, entry);
	entry.read.catch(() => credentials.get(key) === entry && credentials.delete(key));
	return { value: await entry.read, earlier: false };
}

export async function receiveDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const arrived = performance.now();
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
	const trigger = [this.getWorkflow().id ?? '', node.name].join('\n');
	const stored = storedSubscriptions(this.getWorkflowStaticData('node'));
	const subscription = stored.get(key);
	const mode = (options.verification as VerificationMode | undefined) ?? 'hmacSha256';
	// The path of this trigger's address: the service logs each try's `target_url`.
	let ownPath = '';
	const check = async (fresh: boolean) => {
		let earlier = false;
		const readCredentials = async (type: string) => {
			const credentialKey = [trigger, type, node.credentials?.[type]?.id ?? ''].join('\n');
			const read = await credentialFor(credentialKey, arrived, fresh, async () => await this.getCredentials(type));
			earlier ||= read.earlier;
			return read.value;
		};
		ownPath = pathOf(this.getNodeWebhookUrl('default') ?? '');
		// The duplicate check never waits on a busy service: no Retry-After waits, a short timeout.
		const client = clientFor(this, { timeoutMs: EVENT_LOG_CHECK_MS, maxRetryWaitMs: 0, readCredentials });
		const signingKey = stored.size > 0 ? await client.webhookSigningKey() : '';
		const verified = verifyDelivery({
			mode,
			rawBody: raw,
			headers: this.getHeaderData() as Record<string, string | string[] | undefined>,
			headerName: typeof options.signatureHeader === 'string' ? options.signatureHeader : DEFAULT_SIGNATURE_HEADER,
			secret: subscription && mode !== 'none' ? secretOf(node, key, subscription, signingKey) : undefined,
		}).ok;
		// The log's reads go on past the delivery's answer, so that a run without an id still claims its event.
		const logClient = clientFor(this, { timeoutMs: EVENT_LOG_READ_MS, maxRetryWaitMs: 0, readCredentials });
		return { client, logClient, signingKey, verified, earlier };
	};
	let checked = await check(false);
	if (!checked.verified && checked.earlier) checked = await check(true);
	const { client, logClient, signingKey, verified } = checked;
	const by = { trigger, client, signingKey, ownPath };
	const noKey = subscription && mode !== 'none' && !signingKey && !subscription.legacySecret;
	if (noKey) this.logger.warn(`Clinic Trigger "${node.name}": the credential holds no webhook signing key, so deliveries cannot be verified. Save the credential, then deactivate and activate the workflow.`);
	const oldKeyEvents = eventsOfOldSigningKey(stored, signingKey);
	const byEventId = options.duplicateCheck === 'eventId';
	const delivery = { trigger, client, stored, arrived };
	if (!verified) {
		// Subscribed with the previous key: resubscribe (at most once a minute from such
		// deliveries: a forged one looks the same); this event is among those caught up.
		if (!oldKeyEvents.includes(key) || !mayResubscribeUnverified(trigger)) return refuse(this, 401, { error: 'Unauthorized' });
		if (byEventId) {
			await resubscribe(this, { reason: 'signingKeyChanged', keys: oldKeyEvents }, stored, by);
			return await runNewEvents(this, delivery);
		}
		return answer(this, 200, { received: true }, await resubscribe(this, { reason: 'signingKeyChanged', keys: oldKeyEvents }, stored, by));
	}

	// 4. A subscription the service stopped (or, without verification, a changed key).
	const stale = oldKeyEvents.length > 0 ? { reason: 'signingKeyChanged' as const, keys: oldKeyEvents } : await findStoppedSubscriptions(this, client, stored, trigger);
	const recovered = stale ? await resubscribe(this, stale, stored, by) : [];
	// The log holds what the stale subscription missed: it runs with this delivery's events.
	if (byEventId) return await runNewEvents(this, delivery);
	if (stale?.reason === 'signingKeyChanged' && stale.keys.includes(key)) return answer(this, 200, { received: true }, recovered);
	// Only without a stored subscription (verification "none"): the topic from the credential.
	const topic = subscription?.topic || fullTopic((await client.integrationSettings()).topicPrefix, event.suffix);
	const value = unwrapPayload(parsed.body) as IDataObject;

	// 5. Repeats.
	const duplicateCheck = (options.duplicateCheck as DuplicateCheck | undefined) ?? 'eventLog';
	const triggerEvent = `${trigger}\n${key}`;
	const json: IDataObject = { event: event.name, topic, eventId: null };
	if (duplicateCheck === 'eventLog') {
		const delivery = { key: triggerEvent, filter: { topic, name: event.name }, payload: value, since: subscribedSince(trigger, key), ownPath };
		const placed = await placeDelivery(this, logClient, delivery);
		if (placed.kind === 'repeat') return answer(this, 200, REPEAT_ANSWER, recovered);
		if (placed.kind === 'event') Object.assign(json, { eventId: placed.event.id, createdAt: placed.event.created_at });
		else if (placed.note) json.note = placed.note;
	} else if (duplicateCheck === 'sameBody') {
		const windowMs = Math.min(numberOption(options.duplicateWindowMinutes, DEFAULT_DUPLICATE_WINDOW_MINUTES) * 60_000, MAX_WINDOW_MS);
		const bodyKey = `body:${triggerEvent}\n${sha256Hex(raw)}`;
		if (windowMs > 0 && taken.get(bodyKey, windowMs)) return answer(this, 200, REPEAT_ANSWER, recovered);
		if (windowMs > 0) rememberIfStored(this, bodyKey);
	}
	Object.assign(json, { deliveryId: deliveryIdOf(key, raw), receivedAt: new Date().toISOString(), value });
	if (options.includeRawBody === true) json.rawBody = raw.toString('utf8');
	const item: INodeExecutionData = { json };

	if (recovered.length > 0) return answer(this, 200, { received: true }, [...recovered, item]);
	// n8n answers this one (an empty 200): from 2.x only once the execution is stored, so a
	// delivery n8n failed to record gets an error answer (and the service's retry), not a 200.
	return { workflowData: [shapeTriggerItems(this, [item])] };
}

/**
 * Same Body Within Window: the body counts as taken at once (a copy at the same moment is a
 * repeat), and is forgotten again when n8n answers with an error or not at all (it did not
 * store the run), so the service's retry runs it.
 */
function rememberIfStored(ctx: IWebhookFunctions, bodyKey: string): void {
	taken.set(bodyKey, { kind: 'body' });
	const response = ctx.getResponseObject();
	const forget = () => taken.delete(bodyKey);
	response.once('finish', () => response.statusCode >= 300 && forget());
	response.once('close', () => !response.writableFinished && forget());
}
