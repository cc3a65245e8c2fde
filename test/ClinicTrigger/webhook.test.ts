/**
 * Deliveries into the trigger's webhook() through n8n-core's WebhookContext: what starts
 * an execution, what is refused, and what the item looks like with Duplicate Check Off
 * (each delivery's own body; what the default runs from the event log is in
 * eventIds.test.ts). Secrets come from a real activation against the simulator; signatures
 * from the simulator's own signing code.
 */
import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { activateTrigger, deliverWebhook } from '../helpers/trigger';
import type { DeliverWebhookOptions, HookResult } from '../helpers/trigger';
import { signDelivery, startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import { CONSULTATION_FINISHED, PATIENT_CREATED, TWR_JOINED, credentialsFor } from './support';

let sim: Simulator;
let activated: HookResult;

const EVENTS = [PATIENT_CREATED, CONSULTATION_FINISHED, TWR_JOINED];

function parameters(options: IDataObject = {}): INodeParameters {
	return { authentication: 'clinicApi', events: EVENTS, options: { duplicateCheck: 'off', ...options } as INodeParameters };
}

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true });
	activated = await activateTrigger({ parameters: parameters(), credentials: credentialsFor(sim) });
	if (activated.error) throw activated.error;
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => forgetProcessMemory());

/** The secret the service holds for the subscription stored for this event (never in static data). */
function secretOf(eventKey: string): string {
	const id = (activated.nodeStaticData[eventKey] as IDataObject).id;
	return sim.subscriptions().find((s) => s.id === id)!.authentication_data.secret;
}

let counter = 0;
function patientBody(extra: IDataObject = {}): Buffer {
	counter++;
	return Buffer.from(JSON.stringify({ value: { id: 100 + counter, first_name: 'Ana', last_name: 'López', ...extra } }), 'utf8');
}

async function deliver(
	rawBody: Buffer,
	{
		event = PATIENT_CREATED,
		headers,
		options = {},
		...rest
	}: Partial<DeliverWebhookOptions> & { event?: string; options?: IDataObject } = {},
) {
	return await deliverWebhook({
		parameters: parameters(options),
		store: activated.store,
		staticData: activated.staticData,
		rawBody,
		headers: headers ?? { 'content-type': 'application/json', signature: signDelivery(secretOf(event), rawBody) },
		query: { event },
		...rest,
	});
}

describe('a verified delivery', () => {
	it('starts one execution with one item: event, topic, deliveryId, receivedAt, value', async () => {
		const raw = patientBody();
		const before = Date.now();
		const result = await deliver(raw);
		expect(result.error).toBeUndefined();
		expect(result.response).toEqual({ status: 200, body: undefined, headers: expect.any(Object) });
		// n8n answers (on 2.x after storing the execution), not the node.
		expect(result.noWebhookResponse).toBeUndefined();
		expect(result.nodeResponse.sent).toBe(false);
		expect(result.workflowData).toHaveLength(1);
		expect(result.workflowData?.[0]).toHaveLength(1);
		const item = result.workflowData![0][0].json;
		expect(item).toEqual({
			event: 'patient-created',
			// Not in the event log (a hand-made delivery): no id, and never dropped for that.
			eventId: null,
			topic: 'clinic-38729.patient',
			deliveryId: expect.stringMatching(/^[0-9a-f]{64}$/),
			receivedAt: expect.any(String),
			value: JSON.parse(raw.toString()).value,
		});
		expect(Date.parse(item.receivedAt as string)).toBeGreaterThanOrEqual(before - 1000);
		expect(JSON.stringify(result.workflowData)).not.toContain(secretOf(PATIENT_CREATED));
	});

	it('changes no static data (n8n 2.41 would not keep it from webhook() anyway)', async () => {
		const result = await deliver(patientBody());
		expect(result.staticDataChanged).toBe(false);
		expect(result.staticData).toEqual(activated.staticData);
	});

	it('a top-level identifier object (no value key) is the value itself', async () => {
		const raw = Buffer.from(JSON.stringify({ patient_id: 42, waiting_room_id: 7 }));
		const result = await deliver(raw, { event: TWR_JOINED });
		expect(result.workflowData?.[0][0].json).toMatchObject({
			event: 'patient-joined-twr',
			topic: 'clinic-38729.waiting-room',
			value: { patient_id: 42, waiting_room_id: 7 },
		});
	});

	it('includes the raw body as text when asked', async () => {
		const raw = patientBody({ note: 'ñandú "quoted"' });
		const result = await deliver(raw, { options: { includeRawBody: true } });
		expect(result.workflowData?.[0][0].json.rawBody).toBe(raw.toString('utf8'));
		const without = await deliver(patientBody());
		expect(without.workflowData?.[0][0].json).not.toHaveProperty('rawBody');
	});

	it('deliveryId is sha256 of event and bytes: the same in every process, different per event', async () => {
		const raw = patientBody();
		const first = await deliver(raw);
		forgetProcessMemory(); // another n8n process
		const second = await deliver(raw);
		expect(second.workflowData?.[0][0].json.deliveryId).toBe(first.workflowData?.[0][0].json.deliveryId);
		const other = await deliver(raw, { event: CONSULTATION_FINISHED });
		expect(other.workflowData?.[0][0].json.deliveryId).not.toBe(first.workflowData?.[0][0].json.deliveryId);
	});
});

describe('verification (default: hex HMAC-SHA256 of the raw body in the `signature` header)', () => {
	it('wrong signature -> 401, no execution', async () => {
		const raw = patientBody();
		const result = await deliver(raw, { headers: { signature: signDelivery('x'.repeat(64), raw) } });
		expect(result.response.status).toBe(401);
		expect(result.workflowData).toBeUndefined();
		expect(result.error).toBeUndefined();
	});

	it('tampered body (signature of other bytes) -> 401', async () => {
		const raw = patientBody();
		const signature = signDelivery(secretOf(PATIENT_CREATED), raw);
		const tampered = Buffer.from(raw.toString().replace('Ana', 'Eve'));
		const result = await deliver(tampered, { headers: { signature } });
		expect(result.response.status).toBe(401);
		expect(result.workflowData).toBeUndefined();
	});

	it('signature of the same JSON serialised differently -> 401 (raw bytes count)', async () => {
		const raw = patientBody();
		const signature = signDelivery(secretOf(PATIENT_CREATED), Buffer.from(JSON.stringify(JSON.parse(raw.toString()), null, 2)));
		expect((await deliver(raw, { headers: { signature } })).response.status).toBe(401);
	});

	it('signature made with another event\'s secret -> 401', async () => {
		const raw = patientBody();
		const result = await deliver(raw, { headers: { signature: signDelivery(secretOf(CONSULTATION_FINISHED), raw) } });
		expect(result.response.status).toBe(401);
	});

	it('missing header -> 401', async () => {
		const result = await deliver(patientBody(), { headers: { 'content-type': 'application/json' } });
		expect(result.response.status).toBe(401);
		expect(result.workflowData).toBeUndefined();
	});

	it('signature under another header name -> 401; accepted once that name is configured, any case', async () => {
		const raw = patientBody();
		const headers = { 'x-clinic-signature': signDelivery(secretOf(PATIENT_CREATED), raw) };
		expect((await deliver(raw, { headers })).response.status).toBe(401);
		const configured = await deliver(raw, { headers, options: { signatureHeader: 'X-Clinic-Signature' } });
		expect(configured.response.status).toBe(200);
		expect(configured.workflowData).toHaveLength(1);
	});

	it('upper-case hex is accepted', async () => {
		const raw = patientBody();
		const result = await deliver(raw, { headers: { signature: signDelivery(secretOf(PATIENT_CREATED), raw).toUpperCase() } });
		expect(result.workflowData).toHaveLength(1);
	});

	it('"Header Equals Secret": the secret itself in the header', async () => {
		const options = { verification: 'secretEquals' };
		const good = await deliver(patientBody(), { options, headers: { signature: secretOf(PATIENT_CREATED) } });
		expect(good.workflowData).toHaveLength(1);
		const raw = patientBody();
		const hmac = await deliver(raw, { options, headers: { signature: signDelivery(secretOf(PATIENT_CREATED), raw) } });
		expect(hmac.response.status).toBe(401);
		const missing = await deliver(patientBody(), { options, headers: {} });
		expect(missing.response.status).toBe(401);
	});

	it('"None": accepted without any header', async () => {
		const result = await deliver(patientBody(), { options: { verification: 'none' }, headers: {} });
		expect(result.workflowData).toHaveLength(1);
		expect(result.workflowData?.[0][0].json.topic).toBe('clinic-38729.patient');
	});

	it('no stored secret for the event (e.g. static data lost) -> 401', async () => {
		const raw = patientBody();
		const result = await deliver(raw, { staticData: {} });
		expect(result.response.status).toBe(401);
		expect(result.workflowData).toBeUndefined();
	});

	it('"None" without stored subscription: the topic comes from the credential', async () => {
		const result = await deliver(patientBody(), { options: { verification: 'none' }, headers: {}, staticData: {} });
		expect(result.workflowData?.[0][0].json.topic).toBe('clinic-38729.patient');
	});
});

describe('which event', () => {
	it('no ?event= -> 404, no execution', async () => {
		const raw = patientBody();
		const result = await deliver(raw, { query: {} });
		expect(result.response.status).toBe(404);
		expect(result.workflowData).toBeUndefined();
	});

	it('an event that is not in the catalog -> 404', async () => {
		const raw = patientBody();
		const result = await deliver(raw, { query: { event: 'patient:patient-exploded' } });
		expect(result.response.status).toBe(404);
	});

	it('a catalog event this trigger does not listen for -> 404', async () => {
		const raw = patientBody();
		const result = await deliver(raw, { query: { event: 'patient:patient-deleted' } });
		expect(result.response.status).toBe(404);
	});

	it('event given twice (?event=a&event=b) -> 404', async () => {
		const result = await deliver(patientBody(), { query: { event: [PATIENT_CREATED, CONSULTATION_FINISHED] } });
		expect(result.response.status).toBe(404);
	});
});

describe('bodies that start nothing: 400', () => {
	const signed = (raw: Buffer) => ({ signature: signDelivery(secretOf(PATIENT_CREATED), raw) });

	it.each([
		['empty', Buffer.alloc(0)],
		['not JSON', Buffer.from('patient=1')],
		['truncated JSON', Buffer.from('{"value":{"id":1}')],
		['JSON but not an object', Buffer.from('[{"id":1}]')],
	])('%s -> 400', async (_label, raw) => {
		const result = await deliver(raw, { headers: { 'content-type': 'application/json', ...signed(raw) } });
		expect(result.response.status).toBe(400);
		expect(result.workflowData).toBeUndefined();
	});

	it('larger than the limit (default 1 MiB) -> 400; a smaller limit is configurable', async () => {
		const big = Buffer.from(JSON.stringify({ value: { notes: 'x'.repeat(1024 * 1024) } }));
		expect((await deliver(big, { headers: signed(big) })).response.status).toBe(400);
		const small = patientBody({ notes: 'x'.repeat(2048) });
		expect((await deliver(small, { headers: signed(small), options: { maxBodySizeKb: 1 } })).response.status).toBe(400);
		expect((await deliver(small, { headers: signed(small) })).workflowData).toHaveLength(1);
	});
});

describe('repeated deliveries, Duplicate Check Off', () => {
	it('every copy runs again, as the option says', async () => {
		const raw = patientBody();
		expect((await deliver(raw)).workflowData).toHaveLength(1);
		expect((await deliver(raw)).workflowData).toHaveLength(1);
	});

	it('"Same Body Within Window", saved by earlier versions, runs each delivery\'s body as Off does', async () => {
		const raw = patientBody();
		const options = { duplicateCheck: 'sameBody', duplicateWindowMinutes: 60 };
		expect((await deliver(raw, { options })).workflowData).toHaveLength(1);
		expect((await deliver(raw, { options })).workflowData).toHaveLength(1);
	});
});

describe('test mode', () => {
	it('a delivery to the /webhook-test/ address starts the manual execution the same way', async () => {
		const listening = await activateTrigger({
			parameters: parameters(),
			credentials: credentialsFor(sim),
			mode: 'manual',
		});
		expect(listening.error).toBeUndefined();
		const raw = patientBody();
		const id = (listening.nodeStaticData[PATIENT_CREATED] as IDataObject).id;
		const secret = sim.subscriptions().find((s) => s.id === id)!.authentication_data.secret;
		const result = await deliverWebhook({
			parameters: parameters(),
			store: listening.store,
			staticData: listening.staticData,
			mode: 'manual',
			rawBody: raw,
			headers: { signature: signDelivery(secret, raw) },
			query: { event: PATIENT_CREATED },
		});
		expect(result.workflowData?.[0][0].json.event).toBe('patient-created');
	});
});
