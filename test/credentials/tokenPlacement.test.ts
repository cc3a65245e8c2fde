/**
 * Where the access token travels, read from the simulator's request log: bearer header on
 * the main API and on webhook-service reads, `service_access_token` in the JSON body of
 * webhook-service POST/DELETE, the `token` query parameter (configurable) on CFDI
 * downloads, nothing on public endpoints; the portal token as bearer on portal requests.
 * Checked through the transport for every endpoint kind (probe node) and through the
 * Clinic node's own operations. Issue 3.
 */
import { forgetProcessMemory, runClinicNode, runClinicRequests } from '../helpers';
import type { ClinicCredentialsInput, RunClinicNodeResult } from '../helpers';
import type { ClinicRequest } from '../../nodes/shared/requestTypes';
import { startSimulator } from '../simulator';
import type { RequestLogEntry, Simulator } from '../simulator';
import { LeakWatch, passwordCredential, refreshCredential } from './support';

jest.setTimeout(30_000);

let sim: Simulator;
const watch = new LeakWatch();

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true });
	watch.secret(sim.demo.password);
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => {
	sim.reset();
	forgetProcessMemory();
});

function placement(entry: RequestLogEntry | undefined) {
	return entry && { method: entry.method, host: entry.host, path: entry.path, tokenPlacement: entry.tokenPlacement, tokenKind: entry.tokenKind };
}

function lastCall(method: string, pathPattern: RegExp): RequestLogEntry | undefined {
	return [...sim.log].reverse().find((entry) => entry.method === method && pathPattern.test(entry.path));
}

async function probe(requests: ClinicRequest[], credentials: ClinicCredentialsInput, authentication: 'clinicApi' | 'clinicRefreshTokenApi' = 'clinicApi'): Promise<RunClinicNodeResult> {
	const result = await runClinicRequests({ authentication, credentials, requests });
	watch.record(result);
	return result;
}

async function node(parameters: Record<string, unknown>, credentials: ClinicCredentialsInput): Promise<RunClinicNodeResult> {
	const result = await runClinicNode({ parameters: parameters as never, credentials });
	watch.record(result);
	return result;
}

describe.each([
	['Clinic API (password)', 'clinicApi' as const],
	['Clinic Refresh Token API', 'clinicRefreshTokenApi' as const],
])('through the transport with %s', (_label, type) => {
	function credentials(): ClinicCredentialsInput {
		if (type === 'clinicApi') return { clinicApi: passwordCredential(sim) };
		const refreshToken = sim.issueRefreshToken(sim.twoFactor.username);
		watch.secret(refreshToken);
		return { clinicRefreshTokenApi: refreshCredential(sim, refreshToken) };
	}

	test('every endpoint kind carries the token where it must, and only there', async () => {
		const [invoiceId] = sim.seedInvoices(1);
		const result = await probe(
			[
				{ method: 'GET', path: '/consultations/1', auth: 'integration' },
				{ method: 'GET', path: '/invoice_item_locations', auth: 'integration' },
				{ host: 'webhooks', method: 'GET', path: '/webhooks', auth: 'integration' },
				{ host: 'webhooks', method: 'GET', path: '/events', auth: 'integration' },
				{
					host: 'webhooks',
					method: 'POST',
					path: '/webhooks',
					auth: 'integration',
					body: {
						url: 'https://n8n.example.test/webhook/placement',
						topic: `${sim.topicPrefix}.consultation`,
						event_name: 'consultation-finished',
						authentication_data: { secret: 'placement-secret-1234567890' },
					},
				},
				{ method: 'GET', path: `/invoices/${invoiceId}/download_cfdi.pdf`, auth: 'integration', tokenPlacement: 'query', binary: true },
				{ method: 'GET', path: `/invoices/${invoiceId}/download_cfdi.xml`, auth: 'integration', tokenPlacement: 'query', binary: true },
				{ method: 'GET', path: '/waiting_rooms', auth: 'none' },
				{ method: 'GET', path: '/states/1', auth: 'none' },
			],
			credentials(),
			type,
		);
		expect(result.error).toBeUndefined();
		expect(result.output?.[0].map((item) => item.json.statusCode)).toEqual([200, 200, 200, 200, 201, 200, 200, 200, 200]);

		expect(sim.subscriptions().some((subscription) => subscription.url.endsWith('/placement'))).toBe(true);

		const spec = sim.log.filter((entry) => !entry.path.endsWith('/oauth/token')).map(placement);
		expect(spec).toEqual([
			{ method: 'GET', host: 'api', path: '/api/v1/consultations/1', tokenPlacement: ['header'], tokenKind: 'integration' },
			{ method: 'GET', host: 'api', path: '/api/v1/invoice_item_locations', tokenPlacement: ['header'], tokenKind: 'integration' },
			{ method: 'GET', host: 'webhooks', path: '/webhooks', tokenPlacement: ['header'], tokenKind: 'integration' },
			{ method: 'GET', host: 'webhooks', path: '/events', tokenPlacement: ['header'], tokenKind: 'integration' },
			{ method: 'POST', host: 'webhooks', path: '/webhooks', tokenPlacement: ['body'], tokenKind: 'integration' },
			{ method: 'GET', host: 'api', path: `/api/v1/invoices/${invoiceId}/download_cfdi.pdf`, tokenPlacement: ['query'], tokenKind: 'integration' },
			{ method: 'GET', host: 'api', path: `/api/v1/invoices/${invoiceId}/download_cfdi.xml`, tokenPlacement: ['query'], tokenKind: 'integration' },
			{ method: 'GET', host: 'api', path: '/api/v1/waiting_rooms', tokenPlacement: [], tokenKind: 'none' },
			{ method: 'GET', host: 'api', path: '/api/v1/states/1', tokenPlacement: [], tokenKind: 'none' },
		]);
		// The CFDI token travels as `token`, the POST body keeps its own fields next to it.
		expect(lastCall('GET', /download_cfdi\.pdf$/)?.query).toEqual({ token: '<token>' });
		expect(lastCall('POST', /^\/webhooks$/)?.body).toMatchObject({ service_access_token: '<token>', event_name: 'consultation-finished' });
	});

	test('a GET with `bodyOnGet` carries its JSON body (n8n drops it otherwise); the token stays a bearer header', async () => {
		sim.seedEvents(3, 'patient', 'patient-created');
		const events = { host: 'webhooks', method: 'GET', path: '/events', auth: 'integration', body: { limit: 1 } } as const;
		const result = await probe([{ ...events, bodyOnGet: true }, events], credentials(), type);
		expect(result.error).toBeUndefined();

		const [withFlag, withoutFlag] = sim.log.filter((entry) => entry.path === '/events');
		expect(withFlag).toMatchObject({ body: { limit: 1 }, tokenPlacement: ['header'], tokenKind: 'integration', status: 200 });
		expect(withoutFlag.body).toBeNull();
		// The simulator reads the parameters from the body only (the spec's place).
		const counts = result.output?.[0].map((item) => (item.json.body as unknown[]).length);
		expect(counts).toEqual([1, 3]);
	});

	test('DELETE on the webhook service carries the token in the JSON body', async () => {
		const creds = credentials();
		const result = await runClinicRequests({
			authentication: type,
			credentials: creds,
			requests: [
				{
					host: 'webhooks',
					method: 'POST',
					path: '/webhooks',
					auth: 'integration',
					body: {
						url: 'https://n8n.example.test/webhook/to-delete',
						topic: `${sim.topicPrefix}.patient`,
						event_name: 'patient-created',
						authentication_data: { secret: 'delete-secret-1234567890' },
					},
				},
			],
		});
		watch.record(result);
		const id = sim.subscriptions().find((subscription) => subscription.url.endsWith('/to-delete'))?.id;
		sim.clearLog();
		const deleted = await runClinicRequests({
			authentication: type,
			store: result.store,
			requests: [{ host: 'webhooks', method: 'DELETE', path: `/webhooks/${id}`, auth: 'integration' }],
		});
		watch.record(deleted);
		expect(deleted.error).toBeUndefined();
		expect(sim.log.map(placement)).toEqual([
			{ method: 'DELETE', host: 'webhooks', path: `/webhooks/${id}`, tokenPlacement: ['body'], tokenKind: 'integration' },
		]);
		expect(sim.log[0].status).toBe(200);
	});
});

test('a custom CFDI token parameter name is used instead of `token`', async () => {
	const other = await startSimulator({ cfdiTokenParam: 'access_key' });
	try {
		const [invoiceId] = other.seedInvoices(1);
		const result = await probe(
			[{ method: 'GET', path: `/invoices/${invoiceId}/download_cfdi.pdf`, auth: 'integration', tokenPlacement: 'query', binary: true }],
			{ clinicApi: { ...passwordCredential(other), cfdiQueryParameter: 'access_key' } },
		);
		expect(result.error).toBeUndefined();
		const entry = other.log.find((item) => item.path.endsWith('.pdf'));
		expect(entry).toMatchObject({ tokenPlacement: ['query'], tokenKind: 'integration', status: 200, query: { access_key: '<token>' } });
	} finally {
		await other.close();
	}
});

test('a webhook service on the same host as the API: API writes still carry the token as a bearer header', async () => {
	// The transport says where each request carries the token; nothing is guessed from the URL.
	const sameHost = new URL(sim.apiBaseUrl).origin;
	const result = await probe(
		[
			{
				method: 'POST',
				path: '/consultation_prescription_drugs',
				auth: 'integration',
				body: { consultation_prescription_drug: { consultation_id: 1, drug_name: 'Paracetamol', dose: '500 mg' } },
			},
		],
		{ clinicApi: { ...passwordCredential(sim), webhookBaseUrl: sameHost } },
	);
	const entry = lastCall('POST', /\/consultation_prescription_drugs$/);
	expect(entry).toMatchObject({ tokenPlacement: ['header'], tokenKind: 'integration' });
	expect(JSON.stringify(entry?.body)).not.toContain('service_access_token');
	// The service accepted the token (whatever it thinks of the body).
	expect(entry?.status).not.toBe(401);
	expect(result.error?.message ?? "").not.toMatch(/refused the credentials/);
});

describe('through the Clinic node operations', () => {
	const creds = (): ClinicCredentialsInput => ({ clinicApi: passwordCredential(sim) });

	test('main API read: bearer header', async () => {
		const result = await node({ authentication: 'clinicApi', resource: 'consultation', operation: 'get', consultationId: '1' }, creds());
		expect(result.error).toBeUndefined();
		expect(placement(lastCall('GET', /consultations\/1$/))).toMatchObject({ tokenPlacement: ['header'], tokenKind: 'integration' });
	});

	test('CFDI PDF download: `token` query parameter only, and the file lands in n8n binary data', async () => {
		const [invoiceId] = sim.seedInvoices(1);
		const result = await node({ authentication: 'clinicApi', resource: 'invoice', operation: 'downloadPdf', invoiceId: String(invoiceId) }, creds());
		expect(result.error).toBeUndefined();
		expect(placement(lastCall('GET', /download_cfdi\.pdf$/))).toMatchObject({ tokenPlacement: ['query'], tokenKind: 'integration' });
		const binary = Object.values(result.output?.[0][0].binary ?? {})[0];
		expect(binary?.mimeType).toBe('application/pdf');
		// Filesystem mode: the bytes are in n8n's binary data store, not inline.
		expect(binary?.id).toMatch(/^filesystem/);
	});

	test('webhook subscriptions: GET with bearer, POST and DELETE with the token in the body', async () => {
		const created = await node(
			{
				authentication: 'clinicApi',
				resource: 'webhookSubscription',
				operation: 'create',
				url: 'https://n8n.example.test/webhook/node-created',
				event: 'consultation:consultation-finished',
			},
			creds(),
		);
		expect(created.error).toBeUndefined();
		expect(placement(lastCall('POST', /^\/webhooks$/))).toMatchObject({ tokenPlacement: ['body'], tokenKind: 'integration' });

		const listed = await runClinicNode({ parameters: { authentication: 'clinicApi', resource: 'webhookSubscription', operation: 'getAll' }, store: created.store });
		watch.record(listed);
		expect(listed.error).toBeUndefined();
		expect(placement(lastCall('GET', /^\/webhooks$/))).toMatchObject({ tokenPlacement: ['header'], tokenKind: 'integration' });

		const id = sim.subscriptions().find((subscription) => subscription.url.endsWith('/node-created'))?.id;
		const deleted = await runClinicNode({
			parameters: { authentication: 'clinicApi', resource: 'webhookSubscription', operation: 'delete', subscriptionId: String(id) },
			store: created.store,
		});
		watch.record(deleted);
		expect(deleted.error).toBeUndefined();
		expect(placement(lastCall('DELETE', /^\/webhooks\/\d+$/))).toMatchObject({ tokenPlacement: ['body'], tokenKind: 'integration' });
	});

	test('events list on the webhook service: bearer header', async () => {
		const result = await node({ authentication: 'clinicApi', resource: 'event', operation: 'getAll' }, creds());
		expect(result.error).toBeUndefined();
		expect(placement(lastCall('GET', /^\/events$/))).toMatchObject({ tokenPlacement: ['header'], tokenKind: 'integration' });
	});

	test('waiting rooms and states: no token, even with a credential selected', async () => {
		const rooms = await node({ authentication: 'clinicApi', resource: 'waitingRoom', operation: 'getAll' }, creds());
		expect(rooms.error).toBeUndefined();
		const state = await node({ authentication: 'clinicApi', resource: 'state', operation: 'get', stateId: '1' }, creds());
		expect(state.error).toBeUndefined();
		expect(placement(lastCall('GET', /waiting_rooms$/))).toMatchObject({ tokenPlacement: [], tokenKind: 'none' });
		expect(placement(lastCall('GET', /states\/1$/))).toMatchObject({ tokenPlacement: [], tokenKind: 'none' });
		// No sign-in is needed for them.
		expect(sim.tokenRequests()).toBe(0);
	});

	test('waiting rooms without any credential (Authentication: None)', async () => {
		const rooms = await node({ authentication: 'none', baseUrl: sim.apiOrigin, resource: 'waitingRoom', operation: 'getAll' }, {});
		expect(rooms.error).toBeUndefined();
		expect(placement(lastCall('GET', /waiting_rooms$/))).toMatchObject({ tokenPlacement: [], tokenKind: 'none' });
	});
});

test('leak check: no password or token in any output item, error message, description or serialised error', () => {
	expect(watch.recordedCount).toBeGreaterThan(8);
	expect(watch.leaks()).toEqual([]);
});
