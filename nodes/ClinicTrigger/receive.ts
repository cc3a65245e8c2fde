/**
 * One delivery from the clinic's webhook service. Order of checks, none of which starts
 * an execution when it fails:
 *
 * 1. body: empty, larger than the limit, not JSON or not an object -> 400;
 * 2. event: `?event=<key>` names an event this trigger listens for -> else 404;
 * 3. proof: signature (or secret) verified over the raw bytes in constant time -> else 401.
 *    A delivery whose subscription was made with the credential's previous key cannot be
 *    verified: the trigger resubscribes and catches up from the event log (resubscribe.ts),
 *    at most once a minute for such deliveries;
 * 4. a verified delivery also finds a subscription the service stopped (resubscribe.ts);
 * 5. repeat -> 200 without a run: by default decided from the event log (duplicateCheck.ts);
 *    opted in, the same body accepted within the window.
 *
 * The node answers refusals and repeats itself; n8n answers an accepted delivery (on 2.x
 * once it stored the run). The credential is read once for all steps, and kept a few
 * seconds for the next deliveries (memory.ts).
 */
import type { ICredentialDataDecryptedObject, IDataObject, INodeExecutionData, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { findEvent, fullTopic } from '../shared/catalog';
import { BODY_PROBLEMS, DEFAULT_MAX_BODY_BYTES, REPEAT_ANSWER, parseDeliveryBody, unwrapPayload } from '../shared/deliveries';
import { DEFAULT_SIGNATURE_HEADER, deliveryIdOf, sha256Hex, verifyDelivery } from '../shared/signature';
import type { VerificationMode } from '../shared/signature';
import { clientFor } from '../shared/transport';
import { shapeTriggerItems } from '../shared/output';
import { EVENT_QUERY_PARAMETER } from '../shared/urls';
import { DEFAULT_DUPLICATE_WINDOW_MINUTES } from './description';
import type { DuplicateCheck } from './description';
import { EVENT_LOG_CHECK_MS, placeDelivery } from './duplicateCheck';
import { MAX_WINDOW_MS, credentials, nextInOrder, taken } from './memory';
import { eventsOfOldSigningKey, findStaleSubscriptions, mayResubscribeUnverified, resubscribe, subscribedSince } from './resubscribe';
import { secretOf, storedSubscriptions } from './storage';

interface Answer {
	status: number;
	body: IDataObject;
}

/** The node's own answer, and a run of `items` if any. Answering itself makes n8n 2.x save the static data resubscribing changed. */
function answerAndRun(ctx: IWebhookFunctions, answer: Answer, items: INodeExecutionData[] = []): IWebhookResponseData {
	ctx.getResponseObject().status(answer.status).json(answer.body);
	return items.length > 0 ? { noWebhookResponse: true, workflowData: [shapeTriggerItems(ctx, items)] } : { noWebhookResponse: true };
}

function numberOption(value: unknown, fallback: number): number {
	return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

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

/**
 * The credential: the one kept from a read of the last CREDENTIAL_KEPT_MS, or with `fresh`
 * one read after the delivery `arrived`. `earlier`: read before it arrived.
 */
async function credentialFor(key: string, arrived: number, fresh: boolean, read: () => Promise<ICredentialDataDecryptedObject>) {
	const kept = credentials.get(key);
	if (kept && (!fresh || kept.order > arrived)) return { value: await kept.read, earlier: kept.order < arrived };
	const entry = { read: read(), order: nextInOrder() };
	credentials.set(key, entry);
	entry.read.catch(() => credentials.get(key) === entry && credentials.delete(key));
	return { value: await entry.read, earlier: false };
}

export async function receiveDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const arrived = nextInOrder();
	const raw = await rawBodyOf(this);
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const node = this.getNode();

	// 1. The body.
	const parsed = parseDeliveryBody(raw, Math.floor(numberOption(options.maxBodySizeKb, DEFAULT_MAX_BODY_BYTES / 1024) * 1024));
	if (!parsed.ok) return answerAndRun(this, { status: 400, body: { error: BODY_PROBLEMS[parsed.reason] } });

	// 2. The event, named by the address since the body does not.
	const query = this.getQueryData() as IDataObject;
	const key = typeof query[EVENT_QUERY_PARAMETER] === 'string' ? (query[EVENT_QUERY_PARAMETER] as string) : '';
	const event = findEvent(key);
	const selected = this.getNodeParameter('events', []) as unknown;
	if (!event || !Array.isArray(selected) || !selected.includes(key)) {
		return answerAndRun(this, { status: 404, body: { error: 'This trigger does not listen for this event' } });
	}

	// 3. The proof, over the raw bytes, with the secret derived from the credential's signing
	//    key; a delivery the kept credential does not verify is checked again with it as saved.
	const trigger = [this.getWorkflow().id ?? '', node.name].join('\n');
	const allStored = storedSubscriptions(this.getWorkflowStaticData('node'));
	const stored = allStored.get(key);
	const mode = (options.verification as VerificationMode | undefined) ?? 'hmacSha256';
	const check = async (fresh: boolean) => {
		let earlier = false;
		const readCredentials = async (type: string) => {
			const credentialKey = [trigger, type, node.credentials?.[type]?.id ?? ''].join('\n');
			const read = await credentialFor(credentialKey, arrived, fresh, async () => await this.getCredentials(type));
			earlier ||= read.earlier;
			return read.value;
		};
		// The duplicate check never waits on a busy service: no Retry-After waits, a short timeout.
		const client = clientFor(this, { timeoutMs: EVENT_LOG_CHECK_MS, maxRetryWaitMs: 0, readCredentials });
		const signingKey = allStored.size > 0 ? await client.webhookSigningKey() : '';
		const verification = verifyDelivery({
			mode,
			rawBody: raw,
			headers: this.getHeaderData() as Record<string, string | string[] | undefined>,
			headerName: typeof options.signatureHeader === 'string' ? options.signatureHeader : DEFAULT_SIGNATURE_HEADER,
			secret: stored && mode !== 'none' ? secretOf(node, key, stored, signingKey) : undefined,
		});
		return { client, signingKey, verified: verification.ok, earlier };
	};
	let checked = await check(false);
	if (!checked.verified && checked.earlier) checked = await check(true);
	const { client, signingKey, verified } = checked;
	if (stored && mode !== 'none' && !signingKey && !stored.legacySecret) {
		this.logger.warn(
			`Clinic Trigger "${node.name}": the credential holds no webhook signing key, so deliveries cannot be verified. Save the credential, then deactivate and activate the workflow.`,
		);
	}
	if (!verified) {
		// Subscribed with the previous key: resubscribe (at most once a minute from such
		// deliveries: a forged one looks the same); this event is among those caught up.
		const oldKeyEvents = eventsOfOldSigningKey(allStored, signingKey);
		if (!oldKeyEvents.includes(key) || !mayResubscribeUnverified(trigger)) return answerAndRun(this, { status: 401, body: { error: 'Unauthorized' } });
		const recovered = await resubscribe(this, trigger, { reason: 'signingKeyChanged', keys: oldKeyEvents }, allStored);
		return answerAndRun(this, { status: 200, body: { received: true } }, recovered);
	}

	// 4. A subscription the service stopped (or, without verification, a changed key).
	const stale = await findStaleSubscriptions(this, client, allStored, trigger, signingKey);
	const recovered = stale ? await resubscribe(this, trigger, stale, allStored) : [];
	if (stale?.reason === 'signingKeyChanged' && stale.keys.includes(key)) return answerAndRun(this, { status: 200, body: { received: true } }, recovered);
	// As resubscribing left it: a subscription made again has a new id.
	const subscription = storedSubscriptions(this.getWorkflowStaticData('node')).get(key);
	// Only without a stored subscription (verification "none"): the topic from the credential.
	const topic = subscription?.topic || fullTopic((await client.integrationSettings()).topicPrefix, event.suffix);
	const value = unwrapPayload(parsed.body) as IDataObject;

	// 5. Repeats.
	const duplicateCheck = (options.duplicateCheck as DuplicateCheck | undefined) ?? 'eventLog';
	const triggerEvent = `${trigger}\n${key}`;
	const json: IDataObject = { event: event.name, topic, eventId: null };
	if (duplicateCheck === 'eventLog') {
		const placed = await placeDelivery(this, client, { key: triggerEvent, filter: { topic, name: event.name }, payload: value, since: subscribedSince(trigger, key) });
		if (placed.kind === 'repeat') return answerAndRun(this, { status: 200, body: REPEAT_ANSWER }, recovered);
		if (placed.kind === 'event') Object.assign(json, { eventId: placed.event.id, createdAt: placed.event.created_at });
		else if (placed.note) json.note = placed.note;
	} else if (duplicateCheck === 'sameBody') {
		const windowMs = Math.min(numberOption(options.duplicateWindowMinutes, DEFAULT_DUPLICATE_WINDOW_MINUTES) * 60_000, MAX_WINDOW_MS);
		const bodyKey = `body:${triggerEvent}\n${String(subscription?.id ?? '')}\n${sha256Hex(raw)}`;
		if (windowMs > 0 && taken.get(bodyKey, windowMs)) return answerAndRun(this, { status: 200, body: REPEAT_ANSWER }, recovered);
		if (windowMs > 0) rememberIfStored(this, bodyKey);
	}
	Object.assign(json, { deliveryId: deliveryIdOf(key, raw), receivedAt: new Date().toISOString(), value });
	if (options.includeRawBody === true) json.rawBody = raw.toString('utf8');
	const item: INodeExecutionData = { json };

	if (recovered.length > 0) return answerAndRun(this, { status: 200, body: { received: true } }, [...recovered, item]);
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
	const answer = ctx.getResponseObject();
	const forget = () => taken.delete(bodyKey);
	answer.once('finish', () => answer.statusCode >= 300 && forget());
	answer.once('close', () => !answer.writableFinished && forget());
}
