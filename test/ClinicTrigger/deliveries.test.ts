import { RecentDeliveries, parseDeliveryBody, unwrapPayload } from '../../nodes/shared/deliveries';

describe('delivery bodies', () => {
	it('a JSON object is accepted', () => {
		expect(parseDeliveryBody(Buffer.from('{"value":{"id":1}}'))).toEqual({ ok: true, body: { value: { id: 1 } } });
	});

	it('empty, whitespace, not JSON, not an object, too large: refused with the reason', () => {
		expect(parseDeliveryBody(Buffer.alloc(0))).toEqual({ ok: false, reason: 'empty' });
		expect(parseDeliveryBody(Buffer.from('  \n'))).toEqual({ ok: false, reason: 'empty' });
		expect(parseDeliveryBody(Buffer.from('<xml/>'))).toEqual({ ok: false, reason: 'notJson' });
		expect(parseDeliveryBody(Buffer.from('{"value":'))).toEqual({ ok: false, reason: 'notJson' });
		expect(parseDeliveryBody(Buffer.from('[1,2]'))).toEqual({ ok: false, reason: 'notObject' });
		expect(parseDeliveryBody(Buffer.from('null'))).toEqual({ ok: false, reason: 'notObject' });
		expect(parseDeliveryBody(Buffer.from('"text"'))).toEqual({ ok: false, reason: 'notObject' });
		expect(parseDeliveryBody(Buffer.from(`{"a":"${'x'.repeat(100)}"}`), 50)).toEqual({ ok: false, reason: 'tooLarge' });
	});

	it('1 MiB is the default limit', () => {
		const justUnder = Buffer.from(`{"a":"${'x'.repeat(1024 * 1024 - 8)}"}`);
		expect(justUnder.length).toBe(1024 * 1024);
		expect(parseDeliveryBody(justUnder).ok).toBe(true);
		const over = Buffer.from(`{"a":"${'x'.repeat(1024 * 1024 - 7)}"}`);
		expect(parseDeliveryBody(over)).toEqual({ ok: false, reason: 'tooLarge' });
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

describe('recent deliveries (bounded LRU)', () => {
	const hour = 60 * 60 * 1000;

	it('the second sighting within the window is a repeat', () => {
		const recent = new RecentDeliveries(10);
		expect(recent.seen('a', hour, 0)).toBe(false);
		expect(recent.seen('a', hour, 1000)).toBe(true);
		expect(recent.seen('b', hour, 1000)).toBe(false);
	});

	it('after the window the same key counts as new again', () => {
		const recent = new RecentDeliveries(10);
		recent.seen('a', hour, 0);
		expect(recent.seen('a', hour, hour + 1)).toBe(false);
		expect(recent.seen('a', hour, hour + 2)).toBe(true);
	});

	it('never holds more than its capacity; the oldest goes first', () => {
		const recent = new RecentDeliveries(3);
		for (const key of ['a', 'b', 'c', 'd']) recent.seen(key, hour, 0);
		expect(recent.size).toBe(3);
		expect(recent.seen('a', hour, 0)).toBe(false); // forgotten
		expect(recent.seen('d', hour, 0)).toBe(true);
	});

	it('stays bounded under a flood of distinct deliveries', () => {
		const recent = new RecentDeliveries(10_000);
		for (let i = 0; i < 50_000; i++) recent.seen(`k${i}`, hour, i);
		expect(recent.size).toBe(10_000);
		expect(recent.seen('k49999', hour, 50_000)).toBe(true);
		expect(recent.seen('k0', hour, 50_000)).toBe(false);
	});
});
