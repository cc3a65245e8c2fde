import { errorText, jsonOf, useSimulator } from './support';

const t = useSimulator();

const march = { resource: 'billingReport', operation: 'get', start: '2025-03-01T00:00:00', end: '2025-03-31T00:00:00' };

describe('Billing Report > Get', () => {
	test('one item per encounter; start and end sent as dates in the query', async () => {
		const result = await t.run(march);

		expect(jsonOf(result).map((encounter) => [encounter.id, encounter.invoice_id, encounter.status])).toEqual([
			[1, 1, 'unsigned'],
			[2, 2, 'unsigned'],
		]);
		expect(t.requests()[0]).toMatchObject({
			method: 'GET',
			path: '/api/v1/reports/consultation_invoice_items',
			query: { start: '2025-03-01', end: '2025-03-31' },
			body: null,
			tokenPlacement: ['header'],
		});
	});

	test('Whole Report: one item with encounters and invoice_metrics', async () => {
		const result = await t.run({ ...march, start: '2025-01-01', output: 'report' });

		const items = jsonOf(result);
		expect(items).toHaveLength(1);
		expect((items[0].encounters as unknown[]).length).toBe(3);
		expect(items[0].invoice_metrics).toEqual([expect.objectContaining({ total_items: 3 })]);
	});

	test('status, patient and extra query parameters are sent as given', async () => {
		const result = await t.run({
			...march,
			start: '2025-01-01',
			additionalFields: { status: 'signed', person: '3' },
			extraQuery: { parameters: [{ name: 'physician', value: 'Medina' }] },
		});

		expect(jsonOf(result).map((encounter) => encounter.id)).toEqual([3]);
		expect(t.requests()[0].query).toEqual({ start: '2025-01-01', end: '2025-03-31', status: 'signed', person: '3', physician: 'Medina' });
	});

	test('an extra parameter may not repeat a field of its own', async () => {
		const result = await t.run({ ...march, extraQuery: { parameters: [{ name: 'start', value: '2020-01-01' }] } });

		expect(errorText(result)).toContain('Extra query parameter "start" is given twice in item 1');
		expect(t.requests()).toEqual([]);
	});

	test('dates are checked before any request', async () => {
		const reversed = await t.run({ ...march, start: '2025-04-01' });
		expect(errorText(reversed)).toContain('End Date (2025-03-31) is before Start Date (2025-04-01) in item 1');

		const invalid = await t.run({ ...march, end: '={{ "31/03/2025" }}' });
		expect(errorText(invalid)).toContain('End Date must be a date (YYYY-MM-DD), but in item 1 it is "31/03/2025"');
		expect(t.requests()).toEqual([]);
	});
});
