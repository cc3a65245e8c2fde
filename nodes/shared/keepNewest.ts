/**
 * The bound on what the process keeps in its maps: a Map keeps insertion order, so setting
 * a key again moves it to the newest end, and past `capacity` the oldest entries go.
 */
export function keepNewest<V>(map: Map<string, V>, key: string, value: V, capacity: number): void {
	map.delete(key);
	map.set(key, value);
	while (map.size > capacity) map.delete(map.keys().next().value as string);
}
