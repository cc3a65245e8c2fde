import { errorText, integrationCredentials, jsonOf, useSimulator } from './support';

const t = useSimulator();

const create = {
	resource: 'webhookSubscription',
	operation: 'create',
	url: 'https://n8n.example.com/webhook/clinic',
	event: 'consultation:consultation-finished',
};

describe('Webhook Subscription > Create', () => {
	test('posts url, full topic, event name and secret; the token goes in the body; the secret is not output', async () => {
		const result = await t.run({ ...create, secret: 'my-own-secret-value' });

		const [subscription] = jsonOf(result);
		expect(subscription).toMatchObject({
			id: t.sim.subscriptions()[0].id,
			url: create.url,
			event_topic: 'clinic-38729.consultation',
			event_name: 'consultation-finished',
			status: 'enabled',
			hasSecret: true,
		});
		expect(JSON.stringify(result.output)).not.toContain('my-own-secret-value');
		const [request] = t.requests();
		expect(request).toMatchObject({ host: 'webhooks', method: 'POST', path: '/webhooks', tokenPlacement: ['body'], tokenKind: 'integration' });
		expect(request.body).toEqual({
			url: create.url,
			topic: 'clinic-38729.consultation',
			event_name: 'consultation-finished',
			authentication_data: { secret: 'my-own-secret-value' },
			service_access_token: '<token>',
		});
	});

	test('no secret given -> a strong random one is generated and returned once', async () => {
		const result = await t.run({ ...create, event: 'consultation-schedule:consultation-schedule-create' });

		const [subscription] = jsonOf(result);
		expect(subscription.secret).toMatch(/^[0-9a-f]{64}$/);
		expect(t.sim.subscriptions()[0]).toMatchObject({
			event_topic: 'clinic-38729.consultation-schedule',
			event_name: 'consultation-schedule-create',
			authentication_data: { secret: subscription.secret },
		});

		const listed = await t.run({ resource: 'webhookSubscription', operation: 'getAll', returnAll: true });
		expect(JSON.stringify(listed.output)).not.toContain(subscription.secret as string);
	});

	test('an http:// URL is refused before any request, unless allowed', async () => {
		const refused = await t.run({ ...create, url: 'http://localhost:5678/webhook/x' });
		expect(errorText(refused)).toContain('Callback URL must be an https:// address, but in item 1 it is "http://localhost:5678/webhook/x"');
		expect(errorText(refused)).toContain('Allow Insecure URL');
		expect(t.requests()).toEqual([]);

		// Allowed by the node, the request goes out; this service accepts https only and says so.
		const allowed = await t.run({ ...create, url: 'http://localhost:5678/webhook/x', subscriptionOptions: { allowInsecureUrl: true } });
		expect(allowed.error?.message).toBe('The clinic service refused the request: url must be an HTTPS URL');
		expect(t.requests()).toHaveLength(1);
	});

	test('no topic prefix in the credential -> says to fill "Topic Prefix"', async () => {
		const result = await t.run(create, { credentials: { clinicApi: integrationCredentials(t.sim, { topicPrefix: '' }) } });

		expect(errorText(result)).toContain('The Clinic credential has no Topic Prefix');
		expect(t.requests()).toEqual([]);
	});
});

describe('Webhook Subscription > Get Many', () => {
	/** Three subscriptions, the first deleted; answers their ids. */
	async function subscribeThree(): Promise<number[]> {
		const made = await t.run(create, { items: [{ json: {} }, { json: {} }] });
		const patient = await t.run({ ...create, event: 'patient:patient-created' });
		const ids = [...jsonOf(made), ...jsonOf(patient)].map((subscription) => subscription.id as number);
		await t.run({ resource: 'webhookSubscription', operation: 'delete', subscriptionId: ids[0] });
		t.sim.clearLog();
		return ids;
	}

	test('only live subscriptions by default, one item each, secrets removed', async () => {
		const ids = await subscribeThree();
		const result = await t.run({ resource: 'webhookSubscription', operation: 'getAll', returnAll: true });

		const items = jsonOf(result);
		expect(items.map((subscription) => subscription.id)).toEqual(ids.slice(1));
		for (const subscription of items) {
			expect(subscription.hasSecret).toBe(true);
			expect(subscription.authentication_data).toEqual({});
		}
		expect(t.requests()).toEqual([
			expect.objectContaining({ host: 'webhooks', method: 'GET', path: '/webhooks', tokenPlacement: ['header'] }),
		]);
	});

	test('Only Live off -> deleted ones too; the event filter and Limit apply', async () => {
		const ids = await subscribeThree();
		const all = await t.run({ resource: 'webhookSubscription', operation: 'getAll', returnAll: true, onlyLive: false });
		expect(jsonOf(all).map((subscription) => subscription.id)).toEqual(ids);

		const patient = await t.run({
			resource: 'webhookSubscription',
			operation: 'getAll',
			returnAll: true,
			filters: { event: 'patient:patient-created' },
		});
		expect(jsonOf(patient).map((subscription) => subscription.event_name)).toEqual(['patient-created']);

		const limited = await t.run({ resource: 'webhookSubscription', operation: 'getAll', onlyLive: false, limit: 2 });
		expect(jsonOf(limited).map((subscription) => subscription.id)).toEqual(ids.slice(0, 2));
	});
});

describe('Webhook Subscription > Delete', () => {
	test('deletes with the token in the body; outputs {deleted, id}', async () => {
		const [{ id }] = jsonOf(await t.run(create));
		t.sim.clearLog();
		const result = await t.run({ resource: 'webhookSubscription', operation: 'delete', subscriptionId: String(id) });

		expect(jsonOf(result)).toEqual([{ deleted: true, id }]);
		expect(t.requests()).toEqual([
			expect.objectContaining({
				host: 'webhooks',
				method: 'DELETE',
				path: `/webhooks/${id}`,
				body: { service_access_token: '<token>' },
				tokenPlacement: ['body'],
			}),
		]);
		expect(t.sim.subscriptions()[0].deleted_at).not.toBeNull();
	});

	test('unknown or already deleted -> says so', async () => {
		const result = await t.run({ resource: 'webhookSubscription', operation: 'delete', subscriptionId: '41' });

		expect(result.error?.message).toBe('Webhook subscription 41 does not exist or was already deleted');
		expect((result.error as { httpCode?: string }).httpCode).toBe('404');
	});
});
