import { NodeHelpers } from 'n8n-workflow';
import type { IDataObject } from 'n8n-workflow';

import { ClinicTrigger } from '../../nodes/ClinicTrigger/ClinicTrigger.node';
import { EVENTS } from '../../nodes/shared/catalog';

const description = new ClinicTrigger().description;

function property(name: string) {
	const found = description.properties.find((p) => p.name === name);
	if (!found) throw new Error(`no property ${name}`);
	return found;
}

describe('Clinic Trigger description', () => {
	it('is a webhook trigger with no inputs and one POST webhook answered on receipt', () => {
		expect(description.name).toBe('clinicTrigger');
		expect(description.displayName).toBe('Clinic Trigger');
		expect(description.group).toEqual(['trigger']);
		expect(description.inputs).toEqual([]);
		expect(description.outputs).toEqual(['main']);
		expect(description.icon).toEqual({ light: 'file:clinic.svg', dark: 'file:clinic.dark.svg' });
		expect(description.webhooks).toEqual([{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', responseData: 'noData', path: 'webhook' }]);
	});

	it('offers both integration credentials, each required under its own choice', () => {
		expect(description.credentials).toEqual([
			{ name: 'clinicApi', required: true, displayOptions: { show: { authentication: ['clinicApi'] } } },
			{ name: 'clinicRefreshTokenApi', required: true, displayOptions: { show: { authentication: ['clinicRefreshTokenApi'] } } },
		]);
		const authentication = property('authentication');
		expect(authentication.options?.map((o) => (o as { value: string }).value)).toEqual(['clinicApi', 'clinicRefreshTokenApi']);
	});

	it('lists every catalog event once, keyed <suffix>:<name>, named as people say it', () => {
		const options = (property('events').options ?? []) as Array<{ name: string; value: string; action?: string; description?: string }>;
		expect(options.map((o) => o.value).sort()).toEqual(EVENTS.map((e) => e.key).sort());
		const byValue = new Map(options.map((o) => [o.value, o]));
		expect(byValue.get('consultation:consultation-finished')).toMatchObject({
			name: 'Consultation Finished',
			action: 'On consultation finished',
		});
		expect(byValue.get('consultation-schedule:consultation-schedule-create')).toMatchObject({
			name: 'Appointment Created',
			action: 'On appointment created',
		});
		expect(byValue.get('invoice-item:invoice-item-created')?.action).toBe('On charge created');
		expect(byValue.get('prescription:prescription-cancel')?.name).toBe('Prescription Cancelled');
		// The service's spelling stays visible in the hint under the name, in plain words.
		expect(byValue.get('prescription:prescription-cancel')?.description).toBe(
			'The service calls it prescription-cancel, on the topic ending in .prescription',
		);
		for (const option of options) expect(option.description).not.toMatch(/Topic Prefix \+|"/);
		expect(byValue.get('account:created')?.name).toBe('Account Created');
		for (const option of options) {
			expect(option.name).not.toMatch(/[-:]/);
			expect(option.action).toMatch(/^On [a-z][a-z ]+$/);
		}
		expect(new Set(options.map((o) => o.action)).size).toBe(options.length);
	});

	it('tells on the panel which webhook address the service accepts, and points an n8n without a public address to the Event Log Trigger', () => {
		const notice = property('httpsNotice');
		expect(notice.type).toBe('notice');
		expect(notice.displayName).toContain('use the Clinic Event Log Trigger instead');
		expect(notice.displayName).toContain('WEBHOOK_URL');
		expect(notice.displayName).toContain('Allow Insecure URL');
		// Once the user allowed http for a local test, the notice has said its piece.
		const shown = (options: IDataObject) => NodeHelpers.displayParameter({ options }, notice, { typeVersion: 1 }, description);
		expect(shown({})).toBe(true);
		expect(shown({ allowInsecureUrl: false })).toBe(true);
		expect(shown({ allowInsecureUrl: true })).toBe(false);
	});

	it('verification defaults to HMAC-SHA256 in the `signature` header; "none" carries a warning', () => {
		const options = property('options').options as Array<{ name: string; default: unknown; options?: Array<{ value: string; description?: string }> }>;
		const verification = options.find((o) => o.name === 'verification');
		expect(verification?.default).toBe('hmacSha256');
		expect(verification?.options?.find((o) => o.value === 'none')?.description).toMatch(/^Warning:/);
		expect(options.find((o) => o.name === 'signatureHeader')?.default).toBe('signature');
		expect(options.find((o) => o.name === 'allowInsecureUrl')?.default).toBe(false);
		expect(options.find((o) => o.name === 'includeRawBody')?.default).toBe(false);
		expect(options.find((o) => o.name === 'maxBodySizeKb')?.default).toBe(1024);
	});

	it('implements the whole webhook lifecycle', () => {
		const node = new ClinicTrigger();
		expect(Object.keys(node.webhookMethods.default).sort()).toEqual(['checkExists', 'create', 'delete']);
		expect(typeof node.webhook).toBe('function');
	});
});
