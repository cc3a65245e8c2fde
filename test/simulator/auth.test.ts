import { startSimulator, type Simulator } from './index';
import { accessToken, api, bearer, passwordGrant, portalToken, request } from './testing';

let sim: Simulator;

beforeAll(async () => {
	sim = await startSimulator();
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => sim.reset());

const tokenUrl = () => `${sim.apiBaseUrl}/oauth/token`;

describe('token endpoint (POST /api/v1/oauth/token)', () => {
	test('password grant with a form body answers a Doorkeeper-shaped token', async () => {
		const before = Math.floor(Date.now() / 1000);
		const answer = await passwordGrant(sim);
		expect(answer.status).toBe(200);
		expect(answer.json).toEqual({
			access_token: expect.any(String),
			token_type: 'bearer',
			expires_in: 86400,
			refresh_token: expect.any(String),
			created_at: expect.any(Number),
		});
		expect(answer.json.created_at).toBeGreaterThanOrEqual(before);
		expect(answer.json.access_token).not.toBe(answer.json.refresh_token);
		expect(answer.headers['cache-control']).toBe('no-store');
	});

	test('password grant also accepts JSON; refresh grant also accepts a form body', async () => {
		const json = await request(tokenUrl(), {
			method: 'POST',
			body: { grant_type: 'password', ...sim.demo },
		});
		expect(json.status).toBe(200);
		const form = await request(tokenUrl(), {
			method: 'POST',
			form: { grant_type: 'refresh_token', refresh_token: json.json.refresh_token },
		});
		expect(form.status).toBe(200);
	});

	test('wrong password and unknown user -> 401 invalid_grant', async () => {
		for (const account of [
			{ username: sim.demo.username, password: 'nope' },
			{ username: 'nobody@clinic.test', password: 'demo-password' },
		]) {
			const answer = await passwordGrant(sim, account);
			expect(answer.status).toBe(401);
			expect(answer.json).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
		}
	});

	test('missing or unknown grant_type -> 400 unsupported_grant_type', async () => {
		const forms: Array<Record<string, string>> = [{ username: 'x', password: 'y' }, { grant_type: 'client_credentials' }];
		for (const form of forms) {
			const answer = await request(tokenUrl(), { method: 'POST', form });
			expect(answer.status).toBe(400);
			expect(answer.json.error).toBe('unsupported_grant_type');
		}
	});

	test('a JSON body sent as text/plain is not read: the grant type is missing', async () => {
		const answer = await request(tokenUrl(), {
			method: 'POST',
			headers: { 'content-type': 'text/plain' },
			body: { grant_type: 'password', ...sim.demo },
		});
		expect(answer.status).toBe(400);
		expect(answer.json.error).toBe('unsupported_grant_type');
	});

	test('2FA account: password grant answers 403 token_type 2fa, every time', async () => {
		for (let i = 0; i < 2; i++) {
			const answer = await passwordGrant(sim, sim.twoFactor);
			expect(answer.status).toBe(403);
			expect(answer.json).toEqual({ token_type: '2fa', error: expect.any(String) });
			expect(answer.json.access_token).toBeUndefined();
		}
	});

	test('2FA account: a refresh token from the web app works with the refresh grant', async () => {
		const refreshToken = sim.issueRefreshToken(sim.twoFactor.username);
		const answer = await request(tokenUrl(), {
			method: 'POST',
			body: { grant_type: 'refresh_token', refresh_token: refreshToken },
		});
		expect(answer.status).toBe(200);
		expect((await api(sim, answer.json.access_token, '/consultations/1')).status).toBe(200);
	});

	test('refresh rotates: the used refresh token and its access token are revoked at once', async () => {
		const first = (await passwordGrant(sim)).json;
		const refreshed = await request(tokenUrl(), {
			method: 'POST',
			body: { grant_type: 'refresh_token', refresh_token: first.refresh_token },
		});
		expect(refreshed.status).toBe(200);
		expect(refreshed.json.refresh_token).not.toBe(first.refresh_token);

		const reused = await request(tokenUrl(), {
			method: 'POST',
			body: { grant_type: 'refresh_token', refresh_token: first.refresh_token },
		});
		expect(reused.status).toBe(400);
		expect(reused.json).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });

		expect((await api(sim, first.access_token, '/consultations/1')).status).toBe(401);
		expect((await api(sim, refreshed.json.access_token, '/consultations/1')).status).toBe(200);
	});

	test('unknown refresh token -> 400 invalid_grant; missing one -> 400 invalid_request', async () => {
		const unknown = await request(tokenUrl(), {
			method: 'POST',
			body: { grant_type: 'refresh_token', refresh_token: 'made-up' },
		});
		expect(unknown.status).toBe(400);
		expect(unknown.json.error).toBe('invalid_grant');
		const missing = await request(tokenUrl(), { method: 'POST', body: { grant_type: 'refresh_token' } });
		expect(missing.status).toBe(400);
		expect(missing.json.error).toBe('invalid_request');
	});

	test('counts token requests per grant', async () => {
		sim.clearLog();
		await passwordGrant(sim);
		await passwordGrant(sim, { username: sim.demo.username, password: 'wrong' });
		await request(tokenUrl(), { method: 'POST', body: { grant_type: 'refresh_token', refresh_token: 'x' } });
		expect(sim.tokenRequests()).toBe(3);
		expect(sim.tokenRequests('password')).toBe(2);
		expect(sim.tokenRequests('refresh_token')).toBe(1);
	});
});

describe('refresh token reuse (two processes holding the same token)', () => {
	const refresh = async (refreshToken: string) =>
		await request(tokenUrl(), { method: 'POST', body: { grant_type: 'refresh_token', refresh_token: refreshToken } });

	test('by default a reuse is refused, counted, and leaves the newest pair of the chain working', async () => {
		sim.clearLog();
		const first = (await passwordGrant(sim)).json;
		const second = (await refresh(first.refresh_token)).json;
		expect(sim.refreshTokenStatus(first.refresh_token)).toEqual({ known: true, live: false, newest: false, used: true });
		expect(sim.refreshTokenStatus(second.refresh_token)).toEqual({ known: true, live: true, newest: true, used: false });

		const reuse = await refresh(first.refresh_token);
		expect(reuse.status).toBe(400);
		expect(reuse.json.error).toBe('invalid_grant');
		expect(sim.tokenRequestCounts()).toEqual({ total: 3, password: 1, refresh_token: 2, refused_reuse: 1 });
		expect((await api(sim, second.access_token, '/consultations/1')).status).toBe(200);
		expect((await refresh(second.refresh_token)).status).toBe(200);
	});

	test('with reuseRevokesChain a reuse also revokes the newest pair of the chain, and only that chain', async () => {
		sim.setReuseRevokesChain(true);
		const first = (await passwordGrant(sim)).json;
		const second = (await refresh(first.refresh_token)).json;
		const other = (await passwordGrant(sim)).json;
		expect((await refresh(first.refresh_token)).status).toBe(400);
		expect((await api(sim, second.access_token, '/consultations/1')).status).toBe(401);
		expect(sim.refreshTokenStatus(second.refresh_token)).toMatchObject({ live: false, newest: true });
		expect((await refresh(second.refresh_token)).status).toBe(400);
		expect((await api(sim, other.access_token, '/consultations/1')).status).toBe(200);
		sim.reset();
		const third = (await passwordGrant(sim)).json;
		await refresh(third.refresh_token);
		expect((await refresh(third.refresh_token)).status).toBe(400);
		expect((await passwordGrant(sim)).status).toBe(200);
	});

	test('a pasted refresh token starts its own chain; unknown tokens are reported as unknown', async () => {
		const pasted = sim.issueRefreshToken(sim.twoFactor.username);
		expect(sim.refreshTokenStatus(pasted)).toEqual({ known: true, live: true, newest: true, used: false });
		const next = (await refresh(pasted)).json;
		expect(sim.refreshTokenStatus(next.refresh_token)).toMatchObject({ live: true, newest: true });
		expect(sim.refreshTokenStatus('made-up')).toEqual({ known: false, live: false, newest: false, used: false });
	});

	test('revokeAccessTokens revokes access tokens only', async () => {
		const first = (await passwordGrant(sim)).json;
		sim.revokeAccessTokens();
		expect((await api(sim, first.access_token, '/consultations/1')).status).toBe(401);
		expect((await refresh(first.refresh_token)).status).toBe(200);
	});
});

describe('token lifetime and revocation', () => {
	test('an access token is refused once created_at + expires_in has passed (lifetime 1 s)', async () => {
		sim.setTokenLifetime(1);
		// The simulator's clock (Date.now, in this process) stands still until moved on: no real waiting.
		const start = Date.now();
		const clock = jest.spyOn(Date, 'now').mockReturnValue(start);
		try {
			const answer = await passwordGrant(sim);
			expect(answer.json.expires_in).toBe(1);
			const token = answer.json.access_token;
			expect((await api(sim, token, '/consultations/1')).status).toBe(200);
			clock.mockReturnValue(start + 1100);
			const expired = await api(sim, token, '/consultations/1');
			expect(expired.status).toBe(401);
			expect(expired.json).toEqual({ error: 'Unauthorized' });
			// its refresh token still works
			const refreshed = await request(tokenUrl(), {
				method: 'POST',
				body: { grant_type: 'refresh_token', refresh_token: answer.json.refresh_token },
			});
			expect(refreshed.status).toBe(200);
		} finally {
			clock.mockRestore();
		}
	});

	test('expireAccessTokens expires access tokens only; revokeAllTokens revokes refresh tokens too', async () => {
		const first = (await passwordGrant(sim)).json;
		sim.expireAccessTokens();
		expect((await api(sim, first.access_token, '/invoice_item_locations')).status).toBe(401);
		const refreshed = await request(tokenUrl(), {
			method: 'POST',
			body: { grant_type: 'refresh_token', refresh_token: first.refresh_token },
		});
		expect(refreshed.status).toBe(200);

		sim.revokeAllTokens();
		expect((await api(sim, refreshed.json.access_token, '/invoice_item_locations')).status).toBe(401);
		const again = await request(tokenUrl(), {
			method: 'POST',
			body: { grant_type: 'refresh_token', refresh_token: refreshed.json.refresh_token },
		});
		expect(again.status).toBe(400);
	});
});

describe('hosts and paths', () => {
	test('spec paths without the /api/v1 prefix answer 404 Not found', async () => {
		const token = await accessToken(sim);
		for (const path of ['/consultations/1', '/states/9', '/waiting_rooms', '/oauth/token']) {
			const answer = await request(`${sim.apiOrigin}${path}`, { headers: bearer(token) });
			expect(answer.status).toBe(404);
			expect(answer.json).toEqual({ error: 'Not found' });
		}
		const doubled = await request(`${sim.apiBaseUrl}/api/v1/consultations/1`, { headers: bearer(token) });
		expect(doubled.status).toBe(404);
	});

	test('unknown paths and wrong methods answer 404', async () => {
		const token = await accessToken(sim);
		expect((await api(sim, token, '/patients/1')).status).toBe(404);
		expect((await api(sim, token, '/people/1')).status).toBe(404); // GET is not in the spec, PUT is
		expect((await api(sim, token, '/consultations/1', { method: 'DELETE' })).status).toBe(404);
	});

	test('the webhook host has no token endpoint', async () => {
		for (const path of ['/oauth/token', '/api/v1/oauth/token']) {
			const answer = await request(`${sim.webhooksBaseUrl}${path}`, {
				method: 'POST',
				form: { grant_type: 'password', ...sim.demo },
			});
			expect(answer.status).toBe(404);
		}
		expect(sim.tokenRequests()).toBe(0);
	});

	test('the webhook host serves no main-API paths', async () => {
		const token = await accessToken(sim);
		const answer = await request(`${sim.webhooksBaseUrl}/api/v1/consultations/1`, { headers: bearer(token) });
		expect(answer.status).toBe(404);
	});
});

describe('which endpoints take which token', () => {
	test('main-API endpoints refuse a missing, made-up or query-string token', async () => {
		const token = await accessToken(sim);
		expect((await api(sim, undefined, '/consultations/1')).json).toEqual({ error: 'Unauthorized' });
		expect((await api(sim, 'made-up', '/consultations/1')).status).toBe(401);
		const inQuery = await request(`${sim.apiBaseUrl}/consultations/1?token=${token}`);
		expect(inQuery.status).toBe(401);
	});

	test('waiting rooms and states are public', async () => {
		expect((await api(sim, undefined, '/waiting_rooms')).status).toBe(200);
		expect((await api(sim, undefined, '/states/9')).status).toBe(200);
	});

	test('the portal token is refused on integration endpoints', async () => {
		const portal = await portalToken(sim);
		for (const path of ['/consultations/1', '/invoice_item_locations', '/encounters/1/invoice']) {
			const answer = await api(sim, portal, path);
			expect(answer.status).toBe(401);
		}
		const download = await request(`${sim.apiBaseUrl}/invoices/3/download_cfdi.pdf?token=${portal}`);
		expect(download.status).toBe(401);
		const events = await request(`${sim.webhooksBaseUrl}/events`, { headers: bearer(portal) });
		expect(events.status).toBe(401);
	});

	test('the integration token is refused on portal endpoints', async () => {
		const token = await accessToken(sim);
		const answer = await api(sim, token, '/patient_portal/people');
		expect(answer.status).toBe(401);
		const portal = await portalToken(sim);
		const people = await api(sim, portal, '/patient_portal/people');
		expect(people.status).toBe(200);
		expect(people.json.people.map((p: { id: number }) => p.id)).toEqual([1, 4]);
	});

	test('portal verification: any phone gets 200, only the code sent to the demo phone works, once', async () => {
		const { countryCode, phone, code } = sim.portalDemo;
		const validate = (body: Record<string, string>) =>
			request(`${sim.apiBaseUrl}/patient_portal/validate`, { method: 'POST', body });

		const stranger = await request(`${sim.apiBaseUrl}/patient_portal/auth`, {
			method: 'POST',
			body: { country_code: countryCode, phone: '5500000000' },
		});
		expect(stranger.status).toBe(200);
		expect(stranger.json.message).toEqual(expect.any(String));
		expect((await validate({ code, country_code: countryCode, phone: '5500000000' })).status).toBe(401);

		// No code was requested yet for the demo phone.
		expect((await validate({ code, country_code: countryCode, phone })).status).toBe(401);
		await request(`${sim.apiBaseUrl}/patient_portal/auth`, {
			method: 'POST',
			body: { country_code: countryCode, phone },
		});
		expect((await validate({ code: '000000', country_code: countryCode, phone })).status).toBe(401);
		const good = await validate({ code, country_code: countryCode, phone });
		expect(good.status).toBe(200);
		expect(Object.keys(good.json)).toEqual(['token']);
		expect((await validate({ code, country_code: countryCode, phone })).status).toBe(401);
		expect((await validate({ country_code: countryCode, phone } as Record<string, string>)).status).toBe(422);
	});
});

describe('request log', () => {
	test('records where the token travelled and what it was, with token values hidden', async () => {
		const token = await accessToken(sim);
		sim.clearLog();
		await api(sim, token, '/consultations/1');
		await request(`${sim.apiBaseUrl}/invoices/3/download_cfdi.xml?token=${token}`);
		await request(`${sim.webhooksBaseUrl}/webhooks`, {
			method: 'POST',
			body: { url: 'https://example.test/hook', service_access_token: 'made-up' },
		});
		await request(`${sim.apiBaseUrl}/waiting_rooms`);
		await passwordGrant(sim);

		const [consultation, download, webhook, rooms, grant] = sim.log;
		expect(consultation).toMatchObject({ host: 'api', method: 'GET', path: '/api/v1/consultations/1' });
		expect(consultation).toMatchObject({ tokenPlacement: ['header'], tokenKind: 'integration', status: 200 });
		expect(download).toMatchObject({
			path: '/api/v1/invoices/3/download_cfdi.xml',
			query: { token: '<token>' },
			tokenPlacement: ['query'],
			tokenKind: 'integration',
		});
		expect(webhook).toMatchObject({ host: 'webhooks', tokenPlacement: ['body'], tokenKind: 'invalid', status: 401 });
		expect(webhook.body).toMatchObject({ service_access_token: '<token>' });
		expect(rooms).toMatchObject({ tokenPlacement: [], tokenKind: 'none' });
		expect(grant.body).toEqual({ grant_type: 'password', username: sim.demo.username, password: '<redacted>' });
		expect(JSON.stringify(sim.log)).not.toContain(token);
		expect(sim.log.map((entry) => entry.seq)).toEqual([...sim.log.map((e) => e.seq)].sort((a, b) => a - b));
	});

	test('the log is a bounded ring', async () => {
		const small = await startSimulator({ logLimit: 5 });
		try {
			for (let i = 0; i < 8; i++) await request(`${small.apiBaseUrl}/states/${i + 1}`);
			expect(small.log).toHaveLength(5);
			expect(small.log[0].path).toBe('/api/v1/states/4');
			expect(small.log[4].seq).toBe(8);
		} finally {
			await small.close();
		}
	});
});
