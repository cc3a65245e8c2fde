import { errorText, jsonOf, useSimulator } from './support';

const t = useSimulator();

describe('State > Get (public)', () => {
	test('outputs the unwrapped state; no token sent', async () => {
		const result = await t.run({ resource: 'state', operation: 'get', stateId: '9' });

		expect(jsonOf(result)).toEqual([expect.objectContaining({ id: 9, name: 'Ciudad de México', abbrv: 'CDMX' })]);
		expect(t.sim.log).toEqual([expect.objectContaining({ method: 'GET', path: '/api/v1/states/9', tokenPlacement: [] })]);
	});

	test('an unknown state -> the service\'s 404, naming the state', async () => {
		const result = await t.run(
			{ resource: 'state', operation: 'get', stateId: '999', authentication: 'none', baseUrl: t.sim.apiBaseUrl },
			{ credentials: {} },
		);

		expect(result.error?.message).toBe('State 999 was not found');
		expect(errorText(result)).toContain('State not found');
		expect((result.error as { httpCode?: string }).httpCode).toBe('404');
	});
});
