import { parseDeliveryBody, unwrapPayload } from '../../nodes/ClinicTrigger/receive';

describe('delivery bodies', () => {
	it('a JSON object is accepted', () => {
		expect(parseDeliveryBody(Buffer.from('{"value":{"id":1}}'))).toEqual({ ok: true, body: { value: { id: 1 } } });
	});

	it('empty, whitespace, not JSON, not an object, too large: refused, saying why', () => {
		expect(parseDeliveryBody(Buffer.alloc(0))).toEqual({ ok: false, error: 'Empty body: a JSON object was expected' });
		expect(parseDeliveryBody(Buffer.from('  \n'))).toEqual({ ok: false, error: 'Empty body: a JSON object was expected' });
		expect(parseDeliveryBody(Buffer.from('<xml/>'))).toEqual({ ok: false, error: 'Body is not JSON' });
		expect(parseDeliveryBody(Buffer.from('{"value":'))).toEqual({ ok: false, error: 'Body is not JSON' });
		expect(parseDeliveryBody(Buffer.from('[1,2]'))).toEqual({ ok: false, error: 'Body is JSON but not an object' });
		expect(parseDeliveryBody(Buffer.from('null'))).toEqual({ ok: false, error: 'Body is JSON but not an object' });
		expect(parseDeliveryBody(Buffer.from('"text"'))).toEqual({ ok: false, error: 'Body is JSON but not an object' });
		expect(parseDeliveryBody(Buffer.from(`{"a":"${'x'.repeat(100)}"}`), 50)).toEqual({ ok: false, error: 'Body too large' });
	});

	it('1 MiB is the default limit', () => {
		const justUnder = Buffer.from(`{"a":"${'x'.repeat(1024 * 1024 - 8)}"}`);
		expect(justUnder.length).toBe(1024 * 1024);
		expect(parseDeliveryBody(justUnder).ok).toBe(true);
		const over = Buffer.from(`{"a":"${'x'.repeat(1024 * 1024 - 7)}"}`);
		expect(parseDeliveryBody(over)).toEqual({ ok: false, error: 'Body too large' });
	});
});

describe('payload unwrapping', () => {
	it('a value-wrapped body gives its value', () => {
		expect(unwrapPayload({ value: { id: 9, first_name: 'Ana' } })).toEqual({ id: 9, first_name: 'Ana' });
	});

	it('a value that is null or a list is still the value', () => {
		expect(unwrapPayload({ value: null })).toBeNull();
		expect(unwrapPayload({ value: [1, 2] })).toEqual([1, 2]);
	});

	it('a top-level identifier object is the payload itself', () => {
		expect(unwrapPayload({ patient_id: 4, waiting_room_id: 2 })).toEqual({ patient_id: 4, waiting_room_id: 2 });
	});
});
