/**
 * What this n8n process keeps in memory between executions, in one list: each store's
 * name and what bounds it. n8n may restart at any time, so nothing here is needed for
 * correctness across restarts; it saves requests and holds what one process decided.
 * Tests empty every store with one call, to start as a fresh process would.
 */
export interface ProcessStore {
	name: string;
	/** What keeps it from growing without end: a count, an age, or what it is per. */
	bound: string;
}

const stores: Array<ProcessStore & { clear: () => void }> = [];

/** Registers a module-level store and answers it. */
export function keptInProcess<T extends { clear(): void }>(name: string, bound: string, store: T): T {
	stores.push({ name, bound, clear: () => store.clear() });
	return store;
}

/** Every store this process keeps, with its bound. */
export function processStores(): ProcessStore[] {
	return stores.map(({ name, bound }) => ({ name, bound }));
}

/** Empties every store (tests start as a fresh process would). */
export function forgetProcessMemory(): void {
	for (const store of stores) store.clear();
}

/**
 * The bound on what the process keeps in its maps: a Map keeps insertion order, so setting
 * a key again moves it to the newest end, and past `capacity` the oldest entries go.
 */
export function keepNewest<V>(map: Map<string, V>, key: string, value: V, capacity: number): void {
	map.delete(key);
	map.set(key, value);
	while (map.size > capacity) map.delete(map.keys().next().value as string);
}
