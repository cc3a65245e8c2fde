/**
 * The node as n8n's editor and AI agents use it: resource locators (and saved plain ids),
 * the "From List" search, Simplify, the portal token from an earlier step.
 */
import { SecretCollector, findLeaks, runListSearch } from '../helpers';
import { errorText, integrationCredentials, jsonOf, useSimulator } from './support';

const t = useSimulator({ deliveryRetryDelayMs: 5, deliveryTimeoutMs: 500 });

const rl = (mode: string, value: string) => ({ __rl: true, mode, value });

describe('resource locators', () => {
	test('By URL: a link from another record names the record (consultation link of an invoice)', async () => {
		const invoice = jsonOf(await t.run({ resource: 'invoice', operation: 'getByEncounter', encounterId: rl('id', '1') }))[0];
		const link = (invoice.links as Record<string, string>).consultation;
		expect(link).toMatch(/\/consultations\/\d+$/);
		// The service's links may come with or without the host: both work.
		const withHost = jsonOf(await t.run({ resource: 'consultation', operation: 'get', consultationId: rl('url', `https://api.example.test${link}`) }))[0];

		const consultation = jsonOf(await t.run({ resource: 'consultation', operation: 'get', consultationId: rl('url', link) }))[0];
		expect(link.endsWith(`/consultations/${String(consultation.id)}`)).toBe(true);
		expect(withHost.id).toBe(consultation.id);
		// A link with more path after the id names the same record (the invoice link of a consultation).
		const encounterLink = (consultation.links as Record<string, string>).invoice;
		const again = jsonOf(await t.run({ resource: 'invoice', operation: 'getByEncounter', encounterId: rl('url', encounterLink) }))[0];
		expect(again.id).toBe(invoice.id);
	});

	test('a saved workflow from before the locators (plain id) still runs', async () => {
		const plain = jsonOf(await t.run({ resource: 'consultation', operation: 'get', consultationId: '1' }))[0];
		const byId = jsonOf(await t.run({ resource: 'consultation', operation: 'get', consultationId: rl('id', '1') }))[0];
		expect(plain).toEqual(byId);
		expect(plain.id).toBe(1);
	});

	test('a link to another kind of record stops before any request (n8n checks the link as in the editor)', async () => {
		const result = await t.run({
			resource: 'patient',
			operation: 'getCustomFormResponse',
			patientId: rl('url', 'https://api.example.test/api/v1/consultations/1'),
		});
		expect(errorText(result)).toContain('Not a link to a patient: it must contain /people/ and the number');
		expect(t.requests()).toEqual([]);

		// From an expression the link is known only at run time: the node names the field and item.
		const fromExpression = await t.run(
			{ resource: 'patient', operation: 'getCustomFormResponse', patientId: rl('url', '={{ $json.link }}') },
			{ items: [{ json: { link: '/api/v1/people/1' } }, { json: { link: '/api/v1/consultations/1' } }] },
		);
		expect(errorText(fromExpression)).toContain('Patient ID "/api/v1/consultations/1" in item 2 is not a link to this kind of record');
	});

	test('From List: the live subscriptions, readable and searchable; the picked one is deleted', async () => {
		const create = { resource: 'webhookSubscription', operation: 'create', secret: 's3cret-value-for-test' };
		await t.run({ ...create, url: 'https://n8n.example.com/webhook/a', event: 'consultation:consultation-finished' });
		await t.run({ ...create, url: 'https://n8n.example.com/webhook/b', event: 'patient:patient-created' });
		const credentials = { clinicApi: integrationCredentials(t.sim) };

		const all = await runListSearch({ method: 'searchSubscriptions', parameters: { authentication: 'clinicApi' }, credentials });
		expect(all.results.map((result) => result.name)).toEqual([
			expect.stringMatching(/^Patient Created → https:\/\/n8n\.example\.com\/webhook\/b \(#\d+\)$/),
			expect.stringMatching(/^Consultation Finished → https:\/\/n8n\.example\.com\/webhook\/a \(#\d+\)$/),
		]);
		expect(JSON.stringify(all)).not.toContain('s3cret-value-for-test');

		const found = await runListSearch({ method: 'searchSubscriptions', parameters: { authentication: 'clinicApi' }, credentials, filter: 'finished' });
		expect(found.results).toHaveLength(1);

		const deleted = await t.run({ resource: 'webhookSubscription', operation: 'delete', subscriptionId: rl('list', String(found.results[0].value)) });
		expect(jsonOf(deleted)).toEqual([{ deleted: true, id: Number(found.results[0].value) }]);
		const left = await runListSearch({ method: 'searchSubscriptions', parameters: { authentication: 'clinicApi' }, credentials });
		expect(left.results.map((result) => result.name)).toEqual([expect.stringMatching(/^Patient Created/)]);
	});
});

describe('Simplify', () => {
	test('Consultation > Get: the links and empty fields go, the patient id stays; off by default', async () => {
		const full = jsonOf(await t.run({ resource: 'consultation', operation: 'get', consultationId: '1' }))[0];
		expect(Object.keys(full.links as object).length).toBe(19);

		const simple = jsonOf(await t.run({ resource: 'consultation', operation: 'get', consultationId: '1', simplify: true }))[0];
		expect(simple.links).toBeUndefined();
		expect(Object.values(simple)).not.toContain(null);
		expect(simple).toMatchObject({ id: full.id, encounter_id: full.encounter_id, cause: full.cause });
		expect(String((full.links as Record<string, string>).person)).toMatch(new RegExp(`/people/${String(simple.person_id)}$`));
		expect(JSON.stringify(simple).length).toBeLessThan(JSON.stringify(full).length / 2);
	});

	test('Event > Get Many: the delivery logs become a count and the last response code', async () => {
		t.sim.seedEvents(3);
		const full = jsonOf(await t.run({ resource: 'event', operation: 'getAll', returnAll: true }));
		const simple = jsonOf(await t.run({ resource: 'event', operation: 'getAll', returnAll: true, simplify: true }));
		expect(simple.map((event) => event.id)).toEqual(full.map((event) => event.id));
		for (const [index, event] of simple.entries()) {
			expect(event.logs).toBeUndefined();
			expect(event.deliveries).toBe((full[index].logs as unknown[]).length);
			expect(event.value).toEqual(full[index].value);
		}
	});
});

describe('Patient Portal > Get People with the token of an earlier step', () => {
	async function portalToken(): Promise<string> {
		const { countryCode, phone, code } = t.sim.portalDemo;
		const none = { resource: 'patientPortal', authentication: 'none', baseUrl: t.sim.apiBaseUrl, countryCode, phone };
		await t.run({ ...none, operation: 'sendCode' }, { credentials: {} });
		return jsonOf(await t.run({ ...none, operation: 'verifyCode', code }, { credentials: {} }))[0].token as string;
	}

	const fromStep = {
		resource: 'patientPortal',
		operation: 'getPeople',
		tokenSource: 'parameter',
		portalToken: '={{ $json.token }}',
	};

	test('no credential: the token comes from the input item, goes only in the header and never out', async () => {
		const token = await portalToken();
		t.sim.reset();
		const result = await t.run({ ...fromStep, portalBaseUrl: t.sim.apiBaseUrl, returnAll: true }, { credentials: {}, items: [{ json: { token } }] });

		expect(jsonOf(result).map((person) => person.id)).toEqual([1, 4]);
		expect(t.sim.log).toEqual([
			expect.objectContaining({ method: 'GET', path: '/api/v1/patient_portal/people', tokenPlacement: ['header'], tokenKind: 'portal' }),
		]);
		expect(JSON.stringify(result.output)).not.toContain(token);

		const limited = await t.run({ ...fromStep, portalBaseUrl: t.sim.apiBaseUrl, limit: 1 }, { credentials: {}, items: [{ json: { token } }] });
		expect(jsonOf(limited).map((person) => person.id)).toEqual([1]);
	});

	test('a refused token: the error says so without the token; an empty one names the field', async () => {
		const wrong = 'portal-token-that-is-wrong-0123456789';
		const refused = await t.run({ ...fromStep, portalBaseUrl: t.sim.apiBaseUrl }, { credentials: {}, items: [{ json: { token: wrong } }] });
		expect(refused.error?.message).toContain('401');
		const secrets = new SecretCollector().add(wrong).list();
		expect(findLeaks(secrets, { message: refused.error?.message, description: (refused.error as { description?: string }).description, stack: refused.error?.stack })).toEqual([]);

		const empty = await t.run({ ...fromStep, portalBaseUrl: t.sim.apiBaseUrl }, { credentials: {}, items: [{ json: {} }] });
		expect(errorText(empty)).toContain('Portal Token is empty in item 1');
	});

	test('an API Base URL without https:// gets a message that says so', async () => {
		const result = await t.run({ ...fromStep, portalBaseUrl: 'api.example.test/api/v1' }, { credentials: {}, items: [{ json: { token: 'x' } }] });
		expect(errorText(result)).toContain('API Base URL "api.example.test/api/v1" has no https:// at the start: enter it as https://api.example.test/api/v1');
		expect(t.requests()).toEqual([]);
	});
});
