/**
 * Where a trigger is in the event log, and how one read finds what is new. Every id up to `floor` is handled; above
 * it, those in `seen` ran. Ids are taken in order but may commit late, so a gap between seen ids stays open until
 * LATE_COMMIT_MS after a read first saw an id above it: a window by time, however many other events are logged.
 * Offsets shift on a live log: pages overlap by one event, and one that does not join up is read again from further back.
 */
import { sleep } from 'n8n-workflow';
import type { IDataObject } from 'n8n-workflow';

import type { EventLog } from './eventLog';
import type { EventFilter, EventRecord, ListOrder } from './eventRecord';
import { DEFAULT_PAGE_SIZE } from './eventLog';
import { orderOf } from './eventRecord';

/** How late a transaction may commit after one with a higher id. */
export const LATE_COMMIT_MS = 60_000;
/** How many of the newest events a cursor from now looks at. */
const STARTING_TAIL = 100;

/** An id that ran, and when a read first saw it (ms). */
export type Seen = [id: number, at: number];

export interface Cursor {
	/** Every event with an id up to this one is handled. */
	floor: number;
	/** Ids above `floor` that ran (or were present when the cursor started). */
	seen: Seen[];
	/** Events created before this instant are never emitted (Start From a date). */
	fromDate?: string;
	/** The Start From setting this cursor began with; another setting starts a new cursor. */
	start: string;
	/** Oldest-first logs: per filter, an offset at or before the first event above `floor`. */
	offsets: Record<string, number>;
	/** When the Clinic Trigger's workflow was deactivated (ms). */
	stoppedAt?: number;
}

function filterKey(filter: EventFilter): string {
	return `${filter.topic ?? ''}|${filter.name ?? ''}`;
}

/** Whether the value is a saved cursor (`seen` as pairs, or 0.2's bare ids). */
export function isCursor(value: unknown): value is Cursor {
	const cursor = value as Cursor | undefined;
	return !!cursor && typeof cursor === 'object' && typeof cursor.floor === 'number' && Array.isArray(cursor.seen) && typeof cursor.start === 'string' && !!cursor.offsets && typeof cursor.offsets === 'object';
}

/** The saved cursor as a plain copy (n8n's static data is a proxy, saved whole once written); 0.2's bare ids as seen long ago. */
export function savedCursor(staticData: IDataObject): Cursor | undefined {
	const saved = staticData.cursor;
	if (!isCursor(saved)) return undefined;
	const seen = saved.seen.map((entry: Seen | number): Seen => (typeof entry === 'number' ? [entry, 0] : [entry[0], entry[1]]));
	return { ...saved, seen, offsets: { ...saved.offsets } };
}

export function isHandled(cursor: Pick<Cursor, 'floor' | 'seen'>, id: number): boolean {
	return id <= cursor.floor || cursor.seen.some(([seen]) => seen === id);
}

/** Whether `cursor` counts as handled every id `other` does. */
export function handlesAll(cursor: Pick<Cursor, 'floor' | 'seen'>, other: Pick<Cursor, 'floor' | 'seen'>): boolean {
	const settled = settle(cursor.floor, cursor.seen);
	return other.floor <= settled.floor && other.seen.every(([id]) => isHandled(settled, id));
}

/** Moves the floor past seen ids that join it and, with `read` (at `now`, every id up to `upTo` read), past gaps open LATE_COMMIT_MS. */
export function settle(floor: number, seen: Seen[], read?: { now: number; upTo: number }): Pick<Cursor, 'floor' | 'seen'> {
	const firstAt = new Map<number, number>();
	for (const [id, at] of seen) if (id > floor) firstAt.set(id, Math.min(at, firstAt.get(id) ?? at));
	const sorted = [...firstAt].sort((a, b) => a[0] - b[0]);
	// The gap below each seen id is open since a read first saw it or any id above it.
	const openSince = sorted.map(([, at]) => at);
	for (let i = sorted.length - 2; i >= 0; i--) openSince[i] = Math.min(openSince[i], openSince[i + 1]);
	const givenUp = (next: number) => !!read && sorted[next][0] - 1 <= read.upTo && openSince[next] <= read.now - LATE_COMMIT_MS;
	let next = 0;
	while (next < sorted.length && (sorted[next][0] === floor + 1 || givenUp(next))) floor = sorted[next++][0];
	return { floor, seen: sorted.slice(next) };
}

/** Everything either cursor has handled (the first one's Start From and offsets where it is ahead). */
export function mergeCursors(one: Cursor, other: Cursor): Cursor {
	const offsets = one.floor >= other.floor ? { ...other.offsets, ...one.offsets } : { ...one.offsets, ...other.offsets };
	return { ...one, ...settle(Math.max(one.floor, other.floor), [...one.seen, ...other.seen]), offsets };
}

/** A cursor after the newest matching events ("from now"); with `ran` (the ids of the newest that ran), the others are left to read. */
export async function cursorFromNow(log: EventLog, filters: EventFilter[], start: string, ran?: (newest: EventRecord[]) => number[]): Promise<Cursor> {
	const newest: EventRecord[] = [];
	const offsets: Record<string, number> = {};
	await Promise.all(
		filters.map(async (filter) => {
			const tail = await log.tail(filter, STARTING_TAIL);
			newest.push(...tail.events);
			// Everything listed now is handled: the first read may start at the last event (oldest-first logs).
			if (tail.oldestFirstLength !== undefined) offsets[filterKey(filter)] = Math.max(0, tail.oldestFirstLength - 1);
		}),
	);
	const ranIds = new Set(ran ? ran(newest) : newest.map((event) => event.id));
	const left = newest.filter((event) => !ranIds.has(event.id));
	if (left.length === 0) return { floor: Math.max(0, ...newest.map((event) => event.id)), seen: [], start, offsets };
	const floor = Math.min(...left.map((event) => event.id)) - 1;
	// Seen at no time yet: a gap below them stays open until a read sees past them.
	return { floor, seen: [...ranIds].filter((id) => id > floor).map((id): Seen => [id, Number.MAX_SAFE_INTEGER]), start, offsets: {} };
}

export function cursorFromId(id: number, start: string): Cursor {
	return { floor: Math.max(0, id - 1), seen: [], start, offsets: {} };
}

/** A cursor that emits events created at or after this instant. */
export function cursorFromDate(date: Date, start: string): Cursor {
	return { floor: 0, seen: [], fromDate: date.toISOString(), start, offsets: {} };
}

/** One filter's read as far as it got: new events `found`, each read event's offset, the log's order, the offset past the last, the highest id read (oldest-first: all below it too), and the lowest new id skipped. */
const startScan = (filter: EventFilter, cursor: Cursor) => ({ filter, found: new Map<number, EventRecord>(), positions: new Map<number, number>(), order: undefined as ListOrder | undefined, end: cursor.offsets[filterKey(filter)] ?? 0, reached: cursor.floor, skippedBelow: Infinity, done: false });
type Scan = ReturnType<typeof startScan>;

/** Reads one filter's part of the log into `scan`, at most about `max` new events, each page asked up to `pageTries` times; stops between pages once `stopped()`. */
async function readScan(log: EventLog, scan: Scan, cursor: Cursor, max: number, pageSize: number, pageTries: number, skip: (id: number) => boolean, stopped: () => boolean): Promise<void> {
	const fromDate = cursor.fromDate ? Date.parse(cursor.fromDate) : undefined;
	// A creation time that does not parse (NaN) is before no date.
	const createdBefore = (event: EventRecord) => fromDate !== undefined && Date.parse(String(event.created_at)) < fromDate;
	const isNew = (event: EventRecord) => !isHandled(cursor, event.id) && !createdBefore(event);
	let offset = scan.end;
	let previousLast: number | undefined;
	const ask = async () => await log.page(scan.filter, offset, pageSize);
	while (!stopped()) {
		let asked = ask();
		for (let more = pageTries - 1; more > 0; more--) asked = asked.catch(ask);
		const { events, last: endsHere } = await asked;
		scan.order ??= orderOf(events);
		if (events.length === 0) {
			// The log is shorter than the remembered offset: start again from the top.
			if (offset > 0 && previousLast === undefined) offset = 0;
			else break;
			continue;
		}
		const first = events[0];
		// A remembered offset is safe only where what lies there is handled; a page must join up with the last one.
		const unsafe = previousLast === undefined ? scan.order !== 'newest-first' && isNew(first) : first.id !== previousLast && !scan.positions.has(first.id);
		if (offset > 0 && unsafe) {
			offset = Math.max(0, offset - pageSize);
			continue;
		}
		for (const [index, event] of events.entries()) {
			if (scan.positions.has(event.id)) continue;
			scan.reached = Math.max(scan.reached, event.id);
			scan.positions.set(event.id, offset + index);
			// A skipped event is neither run nor passed.
			if (isNew(event) && skip(event.id)) scan.skippedBelow = Math.min(scan.skippedBelow, event.id);
			else if (isNew(event)) scan.found.set(event.id, event);
		}
		// Memory holds at most twice `max` new events: the highest ids go (a read emits the lowest; the next reads them).
		if (scan.found.size >= 2 * max) for (const id of [...scan.found.keys()].sort((a, b) => a - b).slice(max)) scan.found.delete(id);
		const last = events[events.length - 1];
		scan.end = offset + events.length;
		// Nothing past the event the page overlaps with: nothing more to read. (A longer page that ends with it was pushed down by new events.)
		if ((events.length === 1 && last.id === previousLast) || endsHere) break;
		if (scan.order === 'newest-first' && (last.id <= cursor.floor || createdBefore(last))) break;
		if (scan.order === 'oldest-first' && scan.found.size >= max) break;
		previousLast = last.id;
		// Overlap by one: the next page must start with this page's last event.
		offset = scan.end - 1;
	}
	scan.done = true;
}

/** New events, lowest id first; the cursor once they are emitted; whether every filter was read to its end; whether the log may hold more new events (the read stopped at `max`, or did not finish). */
export interface PollOutcome {
	events: EventRecord[];
	cursor: Cursor;
	complete: boolean;
	more: boolean;
}

/**
 * One read: the new events of every filter (side by side), lowest ids first, at most `max`, and the cursor after them.
 * With `until`, it answers then with what it found below the id every filter was read to (a newest-first log not read
 * to its floor gives nothing); with `finishAfterDeadline`, it reads on and hands that the whole outcome (none if it failed).
 */
export async function poll(
	log: EventLog,
	filters: EventFilter[],
	cursor: Cursor,
	max: number,
	options: { pageSize?: number; pageTries?: number; until?: number; skip?: (id: number) => boolean; finishAfterDeadline?: (outcome?: PollOutcome) => void } = {},
): Promise<PollOutcome> {
	const { pageSize = DEFAULT_PAGE_SIZE, pageTries = 1, until, skip = () => false, finishAfterDeadline } = options;
	const scans = filters.map((filter) => startScan(filter, cursor));
	let stopped = false;
	const reads = Promise.all(scans.map(async (scan) => await readScan(log, scan, cursor, max, pageSize, pageTries, skip, () => stopped)));
	// The deadline's timer, once the reads ended first, runs out and does nothing.
	await (until === undefined ? reads : Promise.race([reads, sleep(Math.max(0, until - Date.now()))]));
	const outcome = outcomeOf(cursor, scans, max);
	if (!outcome.complete) {
		stopped = !finishAfterDeadline;
		// A read that failed before the deadline fails the poll; one still under way ends unheard, or read on.
		reads.then(
			() => finishAfterDeadline?.(outcomeOf(cursor, scans, max)),
			() => finishAfterDeadline?.(),
		);
	}
	return outcome;
}

/** What the scans found so far: the lowest new events up to where every filter was read, and the cursor once they ran (their ids seen now, the floor settled by this read, where each oldest-first log's next read starts). */
function outcomeOf(cursor: Cursor, scans: Scan[], max: number): PollOutcome {
	const complete = scans.every((scan) => scan.done);
	const readUpTo = Math.min(...scans.map((scan) => (scan.done ? Infinity : scan.order === 'oldest-first' ? scan.reached : cursor.floor)));
	const found = [...new Map(scans.flatMap((scan) => [...scan.found])).values()].filter((event) => event.id <= readUpTo).sort((a, b) => a.id - b.id);
	const events = found.slice(0, max);
	// A filter that stopped at `max` new events (or kept only `max` of them) leaves at least `max`.
	const more = !complete || found.length >= max;
	// Gaps are given up only below what was read, and below any event skipped (it may yet run).
	const settledUpTo = Math.min(readUpTo, ...scans.map((scan) => scan.skippedBelow - 1));
	const now = Date.now();
	const { floor, seen } = settle(cursor.floor, [...cursor.seen, ...events.map((event): Seen => [event.id, now])], { now, upTo: settledUpTo });
	const offsets = { ...cursor.offsets };
	for (const scan of scans) {
		if (scan.order !== 'oldest-first') continue;
		// The next read starts just before the first event above the floor: a late commit lands above the floor, so after it.
		let first = scan.end;
		for (const [id, position] of scan.positions) if (id > floor) first = Math.min(first, position);
		offsets[filterKey(scan.filter)] = Math.max(0, first - 1);
	}
	return { events, cursor: { ...cursor, floor, seen, offsets }, complete, more };
}
