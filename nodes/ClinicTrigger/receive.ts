/** One delivery, checked in order (a failed check starts nothing); what it needs from n8n is read here once. The node answers what starts nothing; n8n answers a run. */
import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { findEvent, fullTopic } from '../shared/catalog';
import { shapeTriggerItems } from '../shared/output';
import { clientFor } from '../shared/transport';
import { EVENT_QUERY_PARAMETER } from '../shared/urls';
import { credentialFor, memoryOf } from './memory';
import { ANSWER_WITHIN_MS, readsEventLog, runNewEvents } from './newEvents';
import type { DeliveryRun } from './newEvents';
import { findStoppedSubscriptions, mayResubscribeUnverified, resubscribe } from './resubscribe';
import { DEFAULT_SIGNATURE_HEADER, deliveryIdOf, verifyDelivery } from './signature';
import type { VerificationMode } from './signature';
import { eventsOfOldSigningKey, secretOf, storedSubscriptions, triggerIdOf } from './storage';
import { selectedEventKeys } from './subscriptions';

/** Default largest body accepted, in bytes (1 MiB). Clinic payloads are a few KiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export function parseDeliveryBody(raw: Buffer, maxBytes = DEFAULT_MAX_BODY_BYTES): { ok: true; body: IDataObject } | { ok: false; error: string } {
	if (raw.length > maxBytes) return { ok: false, error: 'Body too large' };
	const text = raw.toString('utf8').trim();
	if (text === '') return { ok: false, error: 'Empty body: a JSON object was expected' };
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch {
		return { ok: false, error: 'Body is not JSON' };
	}
	if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { ok: false, error: 'Body is JSON but not an object' };
	return { ok: true, body: parsed as IDataObject };
}

/** The payload: the service wraps most as `{"value": {...}}`; a body without `value` is the payload itself. */
export function unwrapPayload(body: IDataObject): unknown {
	return Object.prototype.hasOwnProperty.call(body, 'value') ? body.value : body;
}

export async function receiveDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const arrived = Date.now();
	const node = this.getNode();
	const memory = memoryOf([this.getWorkflow().id ?? '', node.name, this.getMode()].join('\n'));
	// n8n loaded the static data just before: a run stored after this may be missing from it.
	const lastRunOnArrival = memory.lastRun;
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const keys = selectedEventKeys(this.getNodeParameter('events', []));
	const query = this.getQueryData() as IDataObject;
	const response = this.getResponseObject();
	// The node's own answer to a delivery that starts nothing (n8n then saves what webhook() changed in static data).
	const answer = (status: number, body: IDataObject): IWebhookResponseData => {
		response.status(status).json(body);
		return { noWebhookResponse: true };
	};

	// 1. The body, as received: n8n has read it only for the content types it parses (the rest on request).
	const request = this.getRequestObject();
	if (!Buffer.isBuffer(request.rawBody)) await request.readRawBody();
	const raw = request.rawBody;
	const maxKb = options.maxBodySizeKb;
	const parsed = parseDeliveryBody(raw, typeof maxKb === 'number' && Number.isFinite(maxKb) && maxKb >= 0 ? Math.floor(maxKb * 1024) : DEFAULT_MAX_BODY_BYTES);
	if (!parsed.ok) return answer(400, { error: parsed.error });

	// 2. The event, named by the address since the body does not.
	const key = typeof query[EVENT_QUERY_PARAMETER] === 'string' ? (query[EVENT_QUERY_PARAMETER] as string) : '';
	const event = findEvent(key);
	if (!event || !keys.includes(key)) return answer(404, { error: 'This trigger does not listen for this event' });

	// 3. The proof, over the raw bytes; a delivery the kept credential does not verify is checked again with it as saved.
	const staticData = this.getWorkflowStaticData('node');
	const stored = storedSubscriptions(staticData);
	const subscription = stored.get(key);
	const mode = (options.verification as VerificationMode | undefined) ?? 'hmacSha256';
	const headerName = typeof options.signatureHeader === 'string' ? options.signatureHeader : DEFAULT_SIGNATURE_HEADER;
	const headers = this.getHeaderData() as Record<string, string | string[] | undefined>;
	const check = async (fresh: boolean) => {
		let earlier = false;
		const readCredentials = async (type: string) => {
			const read = await credentialFor(memory, [type, node.credentials?.[type]?.id ?? ''].join('\n'), arrived, fresh, async () => await this.getCredentials(type));
			earlier ||= read.earlier;
			return read.value;
		};
		// A delivery never waits on a busy service: no Retry-After waits, a short timeout.
		const client = clientFor(this, { timeoutMs: ANSWER_WITHIN_MS, maxRetryWaitMs: 0, readCredentials });
		const signingKey = stored.size > 0 ? await client.webhookSigningKey() : '';
		const secret = subscription && mode !== 'none' ? secretOf(triggerIdOf(node), key, subscription, signingKey) : undefined;
		return { client, readCredentials, signingKey, earlier, verified: verifyDelivery({ mode, rawBody: raw, headers, headerName, secret }) };
	};
	let checked = await check(false);
	if (!checked.verified && checked.earlier) checked = await check(true);
	const { client, signingKey, verified } = checked;
	const run: DeliveryRun = { node, client, staticData, webhookUrl: this.getNodeWebhookUrl('default') ?? '', keys, logger: this.logger, memory, stored, response, arrived, lastRunOnArrival };
	if (subscription && mode !== 'none' && !signingKey && !subscription.legacySecret) {
		run.logger.warn(`Clinic Trigger "${node.name}": the credential holds no webhook signing key, so deliveries cannot be verified. Save the credential, then deactivate and activate the workflow.`);
	}

	// 4. A stale subscription: made with the previous signing key (an unverified delivery may resubscribe for it, once
	//    a minute: a forged one looks the same), or stopped by the service.
	const oldKeyEvents = eventsOfOldSigningKey(stored, signingKey);
	if (!verified && (!oldKeyEvents.includes(key) || !mayResubscribeUnverified(memory))) return answer(401, { error: 'Unauthorized' });
	// Not in a test run: n8n gives it the production address, where a subscription would outlive the test.
	const stale =
		this.getMode() === 'manual' ? undefined : oldKeyEvents.length > 0 ? 'signingKeyChanged' : await findStoppedSubscriptions(node, client, run.logger, stored, memory);
	// Subscribing takes the time the service needs: default timeouts, with the credential already read.
	if (stale) await resubscribe(run, clientFor(this, { readCredentials: checked.readCredentials }), run.logger, stale, memory);

	// 5. What runs: the log's events past the cursor, or the body; an unverified body never runs (a 200 saves a resubscribe).
	if (readsEventLog(options)) {
		const items = await runNewEvents(run);
		return items ? { workflowData: [shapeTriggerItems(this, items)] } : { noWebhookResponse: true };
	}
	if (!verified) return answer(200, { received: true });
	// Only without a stored subscription (verification "none"): the topic from the credential.
	const topic = subscription?.topic || fullTopic((await client.integrationSettings()).topicPrefix, event.suffix);
	const json: IDataObject = { event: event.name, topic, eventId: null, deliveryId: deliveryIdOf(key, raw), receivedAt: new Date().toISOString(), value: unwrapPayload(parsed.body) as IDataObject };
	if (options.includeRawBody === true) json.rawBody = raw.toString('utf8');
	return { workflowData: [shapeTriggerItems(this, [{ json }])] };
}
