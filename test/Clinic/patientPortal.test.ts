import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { SecretCollector, findLeaks } from '../helpers';
import type { RunClinicNodeResult } from '../helpers';
import { errorText, jsonOf, useSimulator } from './support';

const t = useSimulator();

function portalParameters(operation: string, extra: Record<string, unknown> = {}) {
	const { countryCode, phone } = t.sim.portalDemo;
	return { resource: 'patientPortal', operation, countryCode, phone, ...extra };
}

/**
 * The error without its \`node\`: n8n attaches the node (and so its parameters, the code
 * among them) to every node error, as it saves them with the workflow anyway.
 */
function visibleError(result: RunClinicNodeResult): Record<string, unknown> {
	const error = result.error as unknown as Record<string, unknown>;
	return { ...error, node: undefined, message: error.message, description: error.description, stack: error.stack };
}

/** Send Code then Verify Code without any credential, as a portal sign-in flow runs. */
async function portalToken(): Promise<string> {
	const none = { authentication: 'none', baseUrl: t.sim.apiBaseUrl };
	await t.run({ ...portalParameters('sendCode'), ...none }, { credentials: {} });
	const verified = await t.run({ ...portalParameters('verifyCode', { code: t.sim.portalDemo.code }), ...none }, { credentials: {} });
	return jsonOf(verified)[0].token as string;
}

describe('Patient Portal > Send Code', () => {
	test('posts country code and phone with no token at all', async () => {
		const result = await t.run(
			{ ...portalParameters('sendCode', { countryCode: '+52', phone: '55 1234-5678' }), authentication: 'none', baseUrl: t.sim.apiBaseUrl },
			{ credentials: {} },
		);

		expect(jsonOf(result)[0]).toMatchObject({ sent: true, message: expect.stringContaining('verification code') });
		expect(t.requests()).toEqual([
			expect.objectContaining({
				method: 'POST',
				path: '/api/v1/patient_portal/auth',
				body: { country_code: '52', phone: '5512345678' },
				tokenPlacement: [],
			}),
		]);
	});

	test('a phone that is not digits -> stops before any request, naming the field and item', async () => {
		const result = await t.run(portalParameters('sendCode', { phone: 'five five' }));

		expect(errorText(result)).toContain('Phone must be digits only, but in item 1 it is "five five"');
		expect(t.requests()).toEqual([]);
	});
});

describe('Patient Portal > Verify Code', () => {
	test('outputs only the portal token; the code is sent but never output', async () => {
		await t.run(portalParameters('sendCode'));
		const result = await t.run(portalParameters('verifyCode', { code: t.sim.portalDemo.code }));

		const output = jsonOf(result);
		expect(output).toEqual([{ token: expect.any(String) }]);
		expect(JSON.stringify(result.output)).not.toContain(t.sim.portalDemo.code);
		expect(t.requests()[1]).toMatchObject({
			method: 'POST',
			path: '/api/v1/patient_portal/validate',
			body: { code: t.sim.portalDemo.code, country_code: '52', phone: '5512345678' },
			tokenPlacement: [],
		});
	});

	test('a wrong code -> says so, and the code appears in no error', async () => {
		await t.run(portalParameters('sendCode'));
		const result = await t.run(portalParameters('verifyCode', { code: '135799' }));

		expect(result.error?.message).toBe('The portal refused the verification code: it is wrong or has expired');
		expect(errorText(result)).toContain('Send Code');
		expect(findLeaks(['135799'], visibleError(result))).toEqual([]);

		const malformed = await t.run(portalParameters('verifyCode', { code: '12ab34' }));
		expect(errorText(malformed)).toContain('Code must be digits only in item 1');
		expect(findLeaks(['12ab34'], visibleError(malformed))).toEqual([]);
	});
});

test('a service that repeats the code in its error -> the code is blacked out', async () => {
	const server = http.createServer((_req, res) => {
		res.writeHead(422, { 'content-type': 'application/json' });
		res.end(JSON.stringify({ error: 'Code 864200 does not match phone 5512345678' }));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	try {
		const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		const result = await t.run(
			{ ...portalParameters('verifyCode', { code: '864200' }), authentication: 'none', baseUrl },
			{ credentials: {} },
		);

		expect(result.error?.message).toBe('The portal refused the verification code: it is wrong or has expired');
		expect(errorText(result)).toContain('Code •••• does not match');
		expect(findLeaks(['864200'], visibleError(result))).toEqual([]);
	} finally {
		await new Promise<void>((resolve) => server.close(() => resolve()));
	}
});

describe('Patient Portal > Get People', () => {
	test('signs with the portal token only; one item per person', async () => {
		const token = await portalToken();
		t.sim.clearLog();

		const result = await t.run(
			{ resource: 'patientPortal', operation: 'getPeople' },
			{ credentials: { clinicPatientPortalApi: { baseUrl: t.sim.apiBaseUrl, portalToken: token } } },
		);

		expect(jsonOf(result).map((person) => person.id)).toEqual([1, 4]);
		expect(t.sim.log).toEqual([
			expect.objectContaining({ method: 'GET', path: '/api/v1/patient_portal/people', tokenPlacement: ['header'], tokenKind: 'portal' }),
		]);
		const secrets = new SecretCollector().addFromStore(result.store).list();
		expect(findLeaks(secrets, result.output)).toEqual([]);
	});

	describe('version 1.2: Authentication chooses where the token comes from', () => {
		const V12 = { typeVersion: 1.2 };

		test('Portal Token: the credential signs', async () => {
			const token = await portalToken();
			t.sim.clearLog();
			const result = await t.run(
				{ resource: 'patientPortal', operation: 'getPeople' },
				{ ...V12, credentials: { clinicPatientPortalApi: { baseUrl: t.sim.apiBaseUrl, portalToken: token } } },
			);
			expect(jsonOf(result).map((person) => person.id)).toEqual([1, 4]);
			expect(t.sim.log.map((entry) => entry.tokenKind)).toEqual(['portal']);
		});

		test('None: the token and address of an earlier Verify Code step, no credential', async () => {
			const token = await portalToken();
			t.sim.clearLog();
			const result = await t.run(
				{ resource: 'patientPortal', operation: 'getPeople', authentication: 'none', portalToken: token, portalBaseUrl: t.sim.apiBaseUrl },
				{ ...V12, credentials: {} },
			);
			expect(jsonOf(result).map((person) => person.id)).toEqual([1, 4]);
			expect(t.sim.log.map((entry) => [entry.path, entry.tokenKind])).toEqual([['/api/v1/patient_portal/people', 'portal']]);
		});

		test.each([1.1, 1.2])('a node (version %s) switched to Get People still holding Authentication Refresh Token: says what to do, sends nothing', async (typeVersion) => {
			const token = await portalToken();
			t.sim.clearLog();
			const result = await t.run(
				{ authentication: 'clinicRefreshTokenApi', resource: 'patientPortal', operation: 'getPeople' },
				{ typeVersion, credentials: { clinicPatientPortalApi: { baseUrl: t.sim.apiBaseUrl, portalToken: token } } },
			);
			expect(result.error?.message).toBe("Set Authentication to Portal Token: Get People signs in with a patient's portal token");
			expect(t.sim.log).toEqual([]);
		});
	});
});
