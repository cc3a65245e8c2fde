import { jsonOf, useSimulator } from './support';

const t = useSimulator();

describe('Waiting Room > Get Many (public)', () => {
	test('without any credential: no token is sent', async () => {
		const result = await t.run(
			{ resource: 'waitingRoom', operation: 'getAll', authentication: 'none', baseUrl: t.sim.apiOrigin, returnAll: true },
			{ credentials: {} },
		);

		expect(jsonOf(result).map((room) => room.slug)).toEqual(['consulta-general', 'pediatria']);
		expect(t.sim.log).toEqual([expect.objectContaining({ method: 'GET', path: '/api/v1/waiting_rooms', tokenPlacement: [], tokenKind: 'none' })]);
	});

	test('with a credential selected: still no token, and no sign-in', async () => {
		const result = await t.run({ resource: 'waitingRoom', operation: 'getAll', limit: 1 });

		expect(jsonOf(result)).toHaveLength(1);
		expect(t.sim.tokenRequests()).toBe(0);
		expect(t.sim.log).toEqual([expect.objectContaining({ path: '/api/v1/waiting_rooms', tokenPlacement: [] })]);
	});
});
