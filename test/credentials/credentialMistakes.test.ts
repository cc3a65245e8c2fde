/**
 * Mistakes in the Clinic API (password) credential, seen in a node run through n8n-core:
 * each gives an error of its own that says what to fix. Every run is also fed to the file's
 * leak check.
 */
import { ClinicClient } from '../../nodes/shared/transport';
import type { RunClinicNodeResult } from '../helpers';
import type { Simulator } from '../simulator';
import { closedPortUrl, getConsultation, htmlServer, passwordCredential, useSimulator } from './support';

let sim: Simulator;
const { watch, run } = useSimulator((started) => (sim = started), 'wrong-password-123');

const parameters = { authentication: 'clinicApi', ...getConsultation('1') };

describe('mistakes in the credential, seen in a node run', () => {
	const texts: Record<string, string> = {};

	afterAll(() => {
		expect(new Set(Object.values(texts)).size).toBe(Object.keys(texts).length);
	});

	function text(result: RunClinicNodeResult): string {
		return `${result.error?.message ?? ''} | ${result.error?.description ?? ''}`;
	}

	test('wrong password', async () => {
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { password: 'wrong-password-123' }) } });
		expect(result.error?.message).toMatch(/refused the username or password/);
		texts.wrongPassword = text(result);
	});

	test('API Base URL typed without https://: the message says so, nothing is sent', async () => {
		const bare = new URL(sim.apiBaseUrl).host;
		sim.clearLog();
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { baseUrl: bare }) } });
		expect(result.error?.message).toBe(`API Base URL "${bare}" has no https:// at the start: enter it as https://${bare}`);
		expect(sim.log).toEqual([]);
		texts.noScheme = text(result);
	});

	test('unreachable host', async () => {
		const baseUrl = await closedPortUrl();
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { baseUrl }) } });
		expect(text(result)).toMatch(/refused the connection|Could not reach the clinic service/);
		expect(result.error?.description).toContain(new URL(baseUrl).host);
		texts.unreachable = text(result);
	});

	test('a proxy\'s 502 page while the service restarts: named with its status, try again (not "change the address")', async () => {
		for (const status of [502, 503, 504]) {
			const gateway = await htmlServer(status);
			try {
				const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { baseUrl: gateway.url }) } });
				expect(result.error?.message).toMatch(new RegExp(`gateway in front of the clinic service answered ${status}`));
				expect(result.error?.message).toMatch(/Try again in a minute/);
				expect(result.error?.message).not.toMatch(/Set the credential's API Base URL/);
			} finally {
				await gateway.close();
			}
		}
	});

	test('a credential n8n cannot decrypt is reported as that, not as "could not reach the clinic service"', async () => {
		// What n8n throws from reading the credential when its encryption key changed.
		const failure = new Error('Credentials could not be decrypted. The likely reason is that a different "encryptionKey" was used to encrypt the data.');
		const load = jest.spyOn(ClinicClient.prototype as unknown as { send: () => Promise<never> }, 'send').mockRejectedValue(failure);
		try {
			const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim) } });
			expect(result.error?.message).toMatch(/could not be decrypted/);
			expect(result.error?.message).not.toMatch(/Could not reach/);
		} finally {
			load.mockRestore();
		}
	});

	test('a web page as base URL', async () => {
		const site = await htmlServer();
		try {
			const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { baseUrl: site.url }) } });
			expect(result.error?.message).toMatch(/answered with a web page, not the clinic API/);
			texts.html = text(result);
		} finally {
			await site.close();
		}
	});

	test('the webhook service as base URL', async () => {
		const result = await run({ parameters, credentials: { clinicApi: passwordCredential(sim, { baseUrl: sim.webhooksBaseUrl }) } });
		expect(result.error?.message).toMatch(/no token endpoint/);
		expect(result.error?.message).toMatch(/webhook service/);
		texts.webhookHost = text(result);
	});
});

test('leak check: no password or token in any output item, error message, description or serialised error', () => {
	expect(watch.recordedCount).toBeGreaterThan(5);
	expect(watch.secretCount).toBeGreaterThan(1);
	expect(watch.leaks()).toEqual([]);
});
