/** Reading a saved cursor: one saved by 0.2 is taken as it is meant, and a current one is never written to. */
import { isCursor, isHandled, savedCursor } from '../../nodes/shared/eventCursor';
import type { Cursor } from '../../nodes/shared/eventCursor';

/** Static data as n8n hands it to a node: every write marks it changed, and n8n then saves the whole object. */
function watched<T extends object>(value: T, writes: string[]): T {
	return new Proxy(value, {
		get: (target, key) => {
			const inner = Reflect.get(target, key) as unknown;
			return inner && typeof inner === 'object' ? watched(inner, writes) : inner;
		},
		set: (target, key, next) => {
			writes.push(String(key));
			return Reflect.set(target, key, next);
		},
	});
}

describe('isCursor', () => {
	it('reads a current cursor without writing to it (n8n would save the static data on every delivery)', () => {
		const writes: string[] = [];
		const cursor = watched<Cursor>({ floor: 10, seen: [[12, 1_000]], start: 'now', offsets: {} }, writes);
		expect(isCursor(cursor)).toBe(true);
		const copy = savedCursor({ cursor }) as Cursor;
		copy.seen.push([13, 2_000]);
		copy.offsets.x = 1;
		expect(writes).toEqual([]);
		expect(cursor.seen).toEqual([[12, 1_000]]);
	});

	it("reads 0.2's bare ids in `seen` as seen long ago, in a copy (the static data is not written)", () => {
		const writes: string[] = [];
		const staticData = watched({ cursor: { floor: 10, seen: [12, 14], start: 'now', offsets: {} } }, writes);
		const old = savedCursor(staticData) as Cursor;
		expect(writes).toEqual([]);
		expect(old.seen).toEqual([
			[12, 0],
			[14, 0],
		]);
		expect(isHandled(old, 14)).toBe(true);
		expect(isHandled(old, 13)).toBe(false);
	});

	it('refuses what is not a cursor', () => {
		expect(isCursor(undefined)).toBe(false);
		expect(isCursor({ floor: '1', seen: [], start: 'now', offsets: {} })).toBe(false);
		expect(isCursor({ floor: 1, seen: [], start: 'now' })).toBe(false);
	});
});
