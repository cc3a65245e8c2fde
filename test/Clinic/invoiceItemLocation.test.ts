import { jsonOf, useSimulator } from './support';

const t = useSimulator();

describe('Invoice Item Location > Get Many', () => {
	test('Return All -> one item per location', async () => {
		const result = await t.run({ resource: 'invoiceItemLocation', operation: 'getAll', returnAll: true });

		expect(jsonOf(result).map((location) => location.name)).toEqual(['Consultorio 101', 'Farmacia', 'Laboratorio clínico']);
		expect(t.requests()[0]).toMatchObject({ method: 'GET', path: '/api/v1/invoice_item_locations', tokenPlacement: ['header'] });
	});

	test('Limit -> at most that many', async () => {
		const result = await t.run({ resource: 'invoiceItemLocation', operation: 'getAll', returnAll: false, limit: 2 });

		expect(jsonOf(result).map((location) => location.id)).toEqual([1, 2]);
	});
});
