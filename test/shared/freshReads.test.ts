/**
 * Shared reads (nodes/shared/freshReads.ts): callers that arrive together share one read,
 * and no caller is ever answered by a read that started before it arrived.
 */
import { FreshReads } from '../../nodes/shared/freshReads';

/** A value that changes, read through reads the test finishes by hand. */
function store(initial: string) {
	let value = initial;
	const started: Array<{ snapshot: string; finish: () => void; fail: (error: Error) => void }> = [];
	const start = async () =>
		await new Promise<string>((resolve, reject) => {
			const snapshot = value;
			started.push({ snapshot, finish: () => resolve(snapshot), fail: reject });
		});
	return {
		set: (next: string) => (value = next),
		start,
		started,
	};
}

const settle = async () => await new Promise((resolve) => setImmediate(resolve));

test('callers arriving while a read is on the wire share the next one: two reads for ten callers', async () => {
	const reads = new FreshReads<string>();
	const source = store('v1');
	const first = reads.read('k', reads.arrival(), source.start);
	const others = Array.from({ length: 9 }, () => reads.read('k', reads.arrival(), source.start));
	expect(source.started).toHaveLength(1);
	source.started[0].finish();
	await settle();
	expect(source.started).toHaveLength(2);
	source.started[1].finish();
	expect(await first).toBe('v1');
	expect(await Promise.all(others)).toEqual(Array(9).fill('v1'));
	expect(source.started).toHaveLength(2);
});

test('a caller that arrived after the value changed never gets the read that started before', async () => {
	const reads = new FreshReads<string>();
	const source = store('old key');
	const before = reads.read('k', reads.arrival(), source.start);
	source.set('new key');
	const after = reads.read('k', reads.arrival(), source.start);
	source.started[0].finish();
	await settle();
	source.started[1].finish();
	expect(await before).toBe('old key');
	expect(await after).toBe('new key');
});

test('a caller that arrived before a read started takes it', async () => {
	const reads = new FreshReads<string>();
	const source = store('v1');
	const arrivedAt = reads.arrival();
	const first = reads.read('k', reads.arrival(), source.start);
	const early = reads.read('k', arrivedAt, source.start);
	expect(source.started).toHaveLength(1);
	source.started[0].finish();
	expect(await early).toBe(await first);
});

test('a failed read fails its own callers; those waiting for the next one get a read of their own', async () => {
	const reads = new FreshReads<string>();
	const source = store('v1');
	const failing = reads.read('k', reads.arrival(), source.start);
	const waiting = reads.read('k', reads.arrival(), source.start);
	source.started[0].fail(new Error('service down'));
	await expect(failing).rejects.toThrow('service down');
	await settle();
	expect(source.started).toHaveLength(2);
	source.started[1].finish();
	expect(await waiting).toBe('v1');
});

test('keys do not share: each key has its own read', async () => {
	const reads = new FreshReads<string>();
	const source = store('v1');
	const a = reads.read('a', reads.arrival(), source.start);
	const b = reads.read('b', reads.arrival(), source.start);
	expect(source.started).toHaveLength(2);
	source.started.forEach((read) => read.finish());
	expect(await Promise.all([a, b])).toEqual(['v1', 'v1']);
});

test('the next read is told how many callers wait for it', async () => {
	const reads = new FreshReads<string>();
	const asked: number[] = [];
	let release: () => void = () => undefined;
	const start = async (waiting: number) => {
		asked.push(waiting);
		await new Promise<void>((resolve) => (release = resolve));
		return 'v';
	};
	const first = reads.read('k', reads.arrival(), start);
	const others = Array.from({ length: 4 }, () => reads.read('k', reads.arrival(), start));
	release();
	await first;
	await settle();
	release();
	await Promise.all(others);
	expect(asked).toEqual([1, 4]);
});
