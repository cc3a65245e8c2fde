import { errorText, jsonOf, useSimulator } from './support';

const t = useSimulator();

describe('Charge > Add to Invoice', () => {
	test('posts the charge under consultation_invoice_item with numbers as text; outputs the record', async () => {
		const result = await t.run({
			resource: 'charge',
			operation: 'addToInvoice',
			invoiceId: '1',
			quantity: 2,
			value: 45.5,
			additionalFields: { invoice_item_id: '3', accounting_type: 'product' },
		});

		const [charge] = jsonOf(result);
		expect(charge).toMatchObject({ invoice_id: 1, quantity: 2, value: 45.5, accounting_type: 'product' });
		const [request] = t.requests();
		expect(request).toMatchObject({ method: 'POST', path: '/api/v1/consultation_invoice_items', tokenPlacement: ['header'] });
		expect(request.body).toEqual({
			consultation_invoice_item: { invoice_id: '1', quantity: '2', value: '45.5', invoice_item_id: '3', accounting_type: 'product' },
		});
	});

	test('quantity and value must be numbers; checked before any request', async () => {
		const result = await t.run(
			{ resource: 'charge', operation: 'addToInvoice', invoiceId: '1', quantity: 1, value: '={{ $json.price }}' },
			{ items: [{ json: { price: 'cien' } }] },
		);

		expect(errorText(result)).toContain('Value must be a number, but in item 1 it is "cien"');
		expect(t.requests()).toEqual([]);
	});

	test('a signed invoice takes no new charges -> the service says so', async () => {
		const result = await t.run({ resource: 'charge', operation: 'addToInvoice', invoiceId: '3', quantity: 1, value: 100 });

		expect(result.error?.message).toBe('The clinic service refused the request: Invoice is already signed');
		expect(errorText(result)).toContain('Invoice 3');
	});
});
