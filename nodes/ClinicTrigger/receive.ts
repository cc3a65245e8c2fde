/**
 * One delivery from the clinic's webhook service. Order of checks, none of which starts
 * an execution when it fails:
 *
 * 1. body: empty, larger than the limit, not JSON or not an object -> 400;
 * 2. event: `?event=<key>` names an event this trigger listens for -> else 404;
 * 3. proof: signature (or secret) verified over the raw bytes in constant time, with the
 *    credential's signing key as saved at most CREDENTIAL_KEPT_MS ago -> else 401. A
 *    delivery whose subscription was made with the credential's previous key cannot be
 *    verified: the subscription is stale, so it subscribes again and catches up from the
 *    event log instead (resubscribe.ts);
 * 4. a verified delivery also finds a subscription the service stopped (resubscribe.ts);
 * 5. repeat -> 200: by default every logged event with this payload was emitted already
 *    (eventResolution.ts), and n8n took the run of each (eventClaims.ts); or, opted in, the
 *    same body accepted within the window. A copy of a delivery n8n has not answered within
 *    the check's 5 s -> 503 with Retry-After (the service's retry then finds the answer).
 *
 * Step 5 checks and records in one synchronous step, so two copies arriving at the same
 * moment cannot both pass it. The node answers refusals and repeats itself; n8n answers an
 * accepted delivery. One client per delivery: the credential is read once for all steps
 * (kept a few seconds for the next deliveries, keptCredentials.ts).
 */
import type { IDataObject, INodeExecutionData, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { keptInProcess } from '../../credentials/ClinicProcessMemory';
import { findEvent, fullTopic } from '../shared/catalog';
import { BODY_PROBLEMS, DEFAULT_MAX_BODY_BYTES, REPEAT_ANSWER, RecentDeliveries, parseDeliveryBody, unwrapPayload } from '../shared/deliveries';
import { DEFAULT_SIGNATURE_HEADER, deliveryIdOf, sha256Hex, verifyDelivery } from '../shared/signature';
import type { VerificationMode } from '../shared/signature';
import { clientFor } from '../shared/transport';
import { DEFAULT_DUPLICATE_WINDOW_MINUTES } from './description';
import type { DuplicateCheck } from './description';
import type { EventRecord } from '../shared/eventRecord';
import { EVENT_LOG_CHECK_MS, resolveDelivery } from './eventResolution';
import { credentialArrival, triggerCredential } from './keptCredentials';
import { eventsOfOldSigningKey, findStaleSubscriptions, resubscribe } from './resubscribe';
import { secretOf, storedSubscriptions } from './storage';
import { EVENT_QUERY_PARAMETER } from '../shared/urls';
import { shapeTriggerItems } from '../shared/output';

/** Recently accepted deliveries of every Clinic Trigger in this n8n process. */
export const recentDeliveries = keptInProcess('deliveries accepted (Same Body Within Window)', '10,000 bodies, the window each', new RecentDeliveries(10_000));

/** When the service is to send again a copy n8n has not yet answered the first of. */
const COPY_RETRY_AFTER_S = 5;

interface Answer {
	status: number;
	body: IDataObject;
}

function respond(ctx: IWebhookFunctions, answer: Answer): void {
	ctx.getResponseObject().status(answer.status).json(answer.body);
}

/**
 * The node's own answer, and a run of `items` when there are any (events caught up by
 * resubscribing). Answering itself is what makes n8n 2.x save the static data resubscribing changed.
 */
function answerAndRun(ctx: IWebhookFunctions, answer: Answer, items: INodeExecutionData[]): IWebhookResponseData {
	respond(ctx, answer);
	return items.length > 0 ? { noWebhookResponse: true, workflowData: [shapeTriggerItems(ctx, items)] } : { noWebhookResponse: true };
}

/** This trigger node, as the stale subscription check keys when it last looked. */
function triggerScopeOf(ctx: IWebhookFunctions): string {
	return [ctx.getWorkflow().id ?? '', ctx.getNode().name].join('\n');
}

/** One trigger's one event, as the duplicate checks key what they remember. */
function triggerKeyOf(ctx: IWebhookFunctions, eventKey: string): string {
	return [triggerScopeOf(ctx), eventKey].join('\n');
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

export async function receiveDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const arrivedAt = credentialArrival();
	const raw = await rawBodyOf(this);
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const maxBytes = Math.floor(numberOption(options.maxBodySizeKb, DEFAULT_MAX_BODY_BYTES / 1024) * 1024);

	// 1. The body.
	const parsed = parseDeliveryBody(raw, maxBytes);
	if (!parsed.ok) {
		respond(this, { status: 400, body: { error: BODY_PROBLEMS[parsed.reason] } });
		return { noWebhookResponse: true };
	}

	// 2. The event, named by the address since the body does not.
	const query = this.getQueryData() as IDataObject;
	const key = typeof query[EVENT_QUERY_PARAMETER] === 'string' ? (query[EVENT_QUERY_PARAMETER] as string) : '';
	const event = findEvent(key);
	const selected = this.getNodeParameter('events', []) as unknown;
	if (!event || !Array.isArray(selected) || !selected.includes(key)) {
		respond(this, { status: 404, body: { error: 'This trigger does not listen for this event' } });
		return { noWebhookResponse: true };
	}

	// 3. The proof, over the raw bytes. The secret is derived from the credential's signing
	//    key, kept in memory for a few seconds (keptCredentials.ts); a delivery the kept key
	//    does not verify is checked again with the credential as saved now.
	const staticData = this.getWorkflowStaticData('node');
	const allStored = storedSubscriptions(staticData);
	const stored = allStored.get(key);
	const mode = (options.verification as VerificationMode | undefined) ?? 'hmacSha256';
	const check = async (fresh: boolean) => {
		let fromMemory = false;
		const readCredentials = async (type: string) => {
			const credentialKey = [triggerScopeOf(this), type, this.getNode().credentials?.[type]?.id ?? ''].join('\n');
			const read = await triggerCredential(credentialKey, arrivedAt, async () => await this.getCredentials(type), fresh);
			fromMemory ||= read.fromMemory;
			return read.value;
		};
		// The duplicate check never waits on a busy service: no Retry-After waits, a short timeout.
		const client = clientFor(this, { timeoutMs: EVENT_LOG_CHECK_MS, maxRetryWaitMs: 0, readCredentials });
		const signingKey = allStored.size > 0 ? await client.webhookSigningKey() : '';
		const secret = stored && mode !== 'none' ? secretOf(this.getNode(), key, stored, signingKey) : undefined;
		const verification = verifyDelivery({
			mode,
			rawBody: raw,
			headers: this.getHeaderData() as Record<string, string | string[] | undefined>,
			headerName: typeof options.signatureHeader === 'string' ? options.signatureHeader : DEFAULT_SIGNATURE_HEADER,
			secret,
		});
		return { client, signingKey, verification, fromMemory };
	};
	let checked = await check(false);
	if (!checked.verification.ok && checked.fromMemory) checked = await check(true);
	const { client, signingKey, verification } = checked;
	if (stored && mode !== 'none' && !signingKey && !stored.legacySecret) {
		this.logger.warn(
			`Clinic Trigger "${this.getNode().name}": the credential holds no webhook signing key, so deliveries cannot be verified. Save the credential, then deactivate and activate the workflow.`,
		);
	}
	const eventKeyOf = (eventKey: string) => triggerKeyOf(this, eventKey);
	if (!verification.ok) {
		const oldKeyEvents = eventsOfOldSigningKey(allStored, signingKey);
		if (!oldKeyEvents.includes(key)) return answerAndRun(this, { status: 401, body: { error: 'Unauthorized' } }, []);
		// Subscribed with the previous key: resubscribe, and this event is among those caught up.
		const recovered = await resubscribe(this, { reason: 'signingKeyChanged', keys: oldKeyEvents }, allStored, eventKeyOf);
		return answerAndRun(this, { status: 200, body: { received: true } }, recovered);
	}

	// 4. A subscription the service stopped (or, without verification, a changed key).
	const stale = await findStaleSubscriptions(this, client, allStored, triggerScopeOf(this), signingKey);
	const recovered = stale ? await resubscribe(this, stale, allStored, eventKeyOf) : [];
	if (stale?.reason === 'signingKeyChanged' && stale.keys.includes(key)) {
		return answerAndRun(this, { status: 200, body: { received: true } }, recovered);
	}
	// As resubscribing left it: a subscription made again has a new id.
	const subscription = storedSubscriptions(staticData).get(key);

	let topic = subscription?.topic ?? '';
	if (!topic) {
		// Only without a stored subscription (verification "none"): ask the credential.
		topic = fullTopic((await client.integrationSettings()).topicPrefix, event.suffix);
	}
	const value = unwrapPayload(parsed.body) as IDataObject;

	// 5. Repeats. Each check records what it accepts in the same synchronous step as it
	//    checks, so two copies arriving at the same moment cannot both pass.
	const duplicateCheck = (options.duplicateCheck as DuplicateCheck | undefined) ?? 'eventLog';
	const triggerKey = triggerKeyOf(this, key);
	let logged: EventRecord | undefined;
	if (duplicateCheck === 'eventLog') {
		const resolution = await resolveDelivery(this, client, triggerKey, { topic, name: event.name }, value);
		if (resolution.kind === 'repeat') return answerAndRun(this, { status: 200, body: REPEAT_ANSWER }, recovered);
		if (resolution.kind === 'later') {
			this.getResponseObject().setHeader('Retry-After', String(COPY_RETRY_AFTER_S));
			return answerAndRun(this, { status: 503, body: { error: 'A copy of this delivery is still being taken; send it again later' } }, recovered);
		}
		if (resolution.kind === 'event') logged = resolution.event;
	} else if (duplicateCheck === 'sameBody') {
		const windowMinutes = numberOption(options.duplicateWindowMinutes, DEFAULT_DUPLICATE_WINDOW_MINUTES);
		const repeatKey = [triggerKey, String(subscription?.id ?? ''), sha256Hex(raw)].join('\n');
		if (windowMinutes > 0 && recentDeliveries.seen(repeatKey, windowMinutes * 60_000)) {
			return answerAndRun(this, { status: 200, body: REPEAT_ANSWER }, recovered);
		}
	}

	const json: IDataObject = {
		event: event.name,
		topic,
		eventId: logged?.id ?? null,
		...(logged?.created_at ? { createdAt: logged.created_at } : {}),
		deliveryId: deliveryIdOf(key, raw),
		receivedAt: new Date().toISOString(),
		value,
	};
	if (options.includeRawBody === true) json.rawBody = raw.toString('utf8');
	const item: INodeExecutionData = { json };

	if (recovered.length > 0) return answerAndRun(this, { status: 200, body: { received: true } }, [...recovered, item]);
	// n8n answers this one (an empty 200): from 2.x only once the execution is stored, so a
	// delivery n8n failed to record gets an error answer (and the service's retry), not a 200.
	return { workflowData: [shapeTriggerItems(this, [item])] };
}
