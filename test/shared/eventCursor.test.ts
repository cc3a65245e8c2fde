/** Reading a saved cursor: one saved by 0.2 is taken as it is meant, and a current one is never written to. */
import { isCursor, isHandled } from '../../nodes/shared/eventCursor';
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
		expect(writes).toEqual([]);
	});

	it("reads 0.2's bare ids in `seen` as seen long ago", () => {
		const old = { floor: 10, seen: [12, 14], start: 'now', offsets: {} } as unknown as Cursor;
		expect(isCursor(old)).toBe(true);
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
