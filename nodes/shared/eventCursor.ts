/**
 * Where a trigger is in the event log, and how one read finds what is new: the Event Log
 * Trigger reads on its schedule, the Clinic Trigger when a delivery wakes it.
 *
 * Ids are the service's own integers, given in increasing order. The cursor says: every
 * id up to `floor` is handled, and of the ids above it, those in `seen` were emitted.
 * Keeping a window of ids below the highest one emitted (instead of "everything up to
 * the highest") means an event whose id was taken before a newer one's but that
 * appeared in the log after it (two transactions committing out of order) is still
 * emitted, once.
 *
 * Offsets shift on a live log (new events push older ones down in a newest-first list),
 * so pages overlap by one event and a page that does not join up with what was read is
 * read again from further back. Ids seen in this poll are skipped, so a shifted page
 * repeats nothing.
 */
import type { EventLog } from './eventLog';
import type { EventFilter, EventRecord, ListOrder } from './eventRecord';
import { DEFAULT_PAGE_SIZE } from './eventLog';
import { orderOf } from './eventRecord';

/** Ids below the highest emitted one that are still watched for late arrivals. */
export const LATE_ID_WINDOW = 100;

export interface Cursor {
	/** Every event with an id up to this one is handled. */
	floor: number;
	/** Ids above `floor` already emitted (or present when the cursor started). */
	seen: number[];
	/** Events created before this instant are never emitted (Start From a date). */
	fromDate?: string;
	/** The Start From setting this cursor began with; another setting starts a new cursor. */
	start: string;
	/** Oldest-first logs: per filter, an offset at or before the first event above `floor`. */
	offsets: Record<string, number>;
}

export function filterKey(filter: EventFilter): string {
	return `${filter.topic ?? ''}|${filter.name ?? ''}`;
}

export function isCursor(value: unknown): value is Cursor {
	const cursor = value as Cursor | undefined;
	return (
		!!cursor &&
		typeof cursor === 'object' &&
		typeof cursor.floor === 'number' &&
		Array.isArray(cursor.seen) &&
		typeof cursor.start === 'string' &&
		!!cursor.offsets &&
		typeof cursor.offsets === 'object'
	);
}

/**
 * A cursor that starts after the newest matching events present now ("from now"); with
 * `handled`, the newest events it says false of are left to be read.
 */
export async function cursorFromNow(log: EventLog, filters: EventFilter[], start: string, handled?: (event: EventRecord) => boolean): Promise<Cursor> {
	let newest: EventRecord[] = [];
	const offsets: Record<string, number> = {};
	for (const filter of filters) {
		const tail = await log.tail(filter, LATE_ID_WINDOW);
		newest.push(...tail.events);
		// Everything listed now is handled: the first poll may start at the last event (oldest-first logs).
		if (tail.oldestFirstLength !== undefined) offsets[filterKey(filter)] = Math.max(0, tail.oldestFirstLength - 1);
	}
	const highest = newest.reduce((max, event) => Math.max(max, event.id), 0);
	const floor = Math.max(0, highest - LATE_ID_WINDOW);
	if (handled) newest = newest.filter(handled);
	return { floor, seen: uniqueSorted(newest.map((event) => event.id).filter((id) => id > floor)), start, offsets };
}

/** A cursor that emits events from this id on. */
export function cursorFromId(id: number, start: string): Cursor {
	return { floor: Math.max(0, id - 1), seen: [], start, offsets: {} };
}

/** A cursor that emits events created at or after this instant. */
export function cursorFromDate(date: Date, start: string): Cursor {
	return { floor: 0, seen: [], fromDate: date.toISOString(), start, offsets: {} };
}

/** Everything either cursor has handled (the first one's Start From and offsets). */
export function mergeCursors(one: Cursor, other: Cursor): Cursor {
	const floor = Math.max(one.floor, other.floor);
	const seen = uniqueSorted([...one.seen, ...other.seen].filter((id) => id > floor));
	const offsets = one.floor >= other.floor ? { ...other.offsets, ...one.offsets } : { ...one.offsets, ...other.offsets };
	return { ...one, floor, seen, offsets };
}

function uniqueSorted(ids: number[]): number[] {
	return [...new Set(ids)].sort((a, b) => a - b);
}

function createdBefore(event: EventRecord, fromDate: number | undefined): boolean {
	if (fromDate === undefined) return false;
	const created = Date.parse(String(event.created_at));
	return Number.isFinite(created) && created < fromDate;
}

interface ScanResult {
	/** The lowest-id new events found, at most `max`, in id order. */
	events: EventRecord[];
	/** Offset of each new event found (oldest-first logs: where the next poll may start). */
	positions: Map<number, number>;
	order?: ListOrder;
	/** Offset just past the last event read. */
	end: number;
}

/**
 * Reads one filter's part of the log and returns its new events, lowest ids first, at
 * most `max` (memory holds at most twice that many events plus one page).
 */
async function scan(log: EventLog, filter: EventFilter, cursor: Cursor, max: number, pageSize: number): Promise<ScanResult> {
	const seen = new Set(cursor.seen);
	const fromDate = cursor.fromDate ? Date.parse(cursor.fromDate) : undefined;
	const readInScan = new Set<number>();
	const positions = new Map<number, number>();
	let candidates: EventRecord[] = [];
	let order: ListOrder | undefined;
	const keep = () => {
		candidates.sort((a, b) => a.id - b.id);
		candidates = candidates.slice(0, max);
	};

	let offset = cursor.offsets[filterKey(filter)] ?? 0;
	let previousLast: number | undefined;
	for (;;) {
		const page = await log.page(filter, offset, pageSize);
		const { events } = page;
		order ??= orderOf(events);
		if (events.length === 0) {
			if (offset > 0 && previousLast === undefined) {
				// The log is shorter than the remembered offset: start again from the top.
				offset = 0;
				continue;
			}
			break;
		}
		const first = events[0];
		if (previousLast === undefined && offset > 0 && order !== 'newest-first') {
			// A remembered offset is safe only when what lies there is handled already.
			if (first.id > cursor.floor && !seen.has(first.id) && !createdBefore(first, fromDate)) {
				offset = Math.max(0, offset - pageSize);
				continue;
			}
		}
		if (previousLast !== undefined && offset > 0 && first.id !== previousLast && !readInScan.has(first.id)) {
			// The page does not join up with the last one: something shifted the offsets. Read from further back.
			offset = Math.max(0, offset - pageSize);
			continue;
		}
		for (let index = 0; index < events.length; index++) {
			const event = events[index];
			if (readInScan.has(event.id)) continue;
			readInScan.add(event.id);
			if (event.id <= cursor.floor || seen.has(event.id) || createdBefore(event, fromDate)) continue;
			positions.set(event.id, offset + index);
			candidates.push(event);
			if (candidates.length >= 2 * max) keep();
		}
		const last = events[events.length - 1];
		// Nothing past the event the page overlaps with: nothing more to read.
		if (last.id === previousLast) break;
		if (order === 'newest-first' && (last.id <= cursor.floor || createdBefore(last, fromDate))) break;
		if (order === 'oldest-first' && candidates.length >= max) break;
		previousLast = last.id;
		// Overlap by one: the next page must start with this page's last event.
		offset = offset + events.length - 1;
		if (page.last) break;
	}
	keep();
	return { events: candidates, positions, order, end: offset };
}

export interface PollOutcome {
	/** New events to emit, oldest (lowest id) first. */
	events: EventRecord[];
	/** The cursor once they are emitted. */
	cursor: Cursor;
}

/**
 * One poll: the new events of every filter, lowest ids first, at most `max`, and the
 * cursor that follows them. Events beyond `max` stay for the next poll.
 */
export async function poll(
	log: EventLog,
	filters: EventFilter[],
	cursor: Cursor,
	max: number,
	pageSize = DEFAULT_PAGE_SIZE,
): Promise<PollOutcome> {
	const scans: Array<{ filter: EventFilter; result: ScanResult }> = [];
	const merged = new Map<number, EventRecord>();
	for (const filter of filters) {
		const result = await scan(log, filter, cursor, max, pageSize);
		scans.push({ filter, result });
		for (const event of result.events) merged.set(event.id, event);
	}
	const events = [...merged.values()].sort((a, b) => a.id - b.id).slice(0, max);

	const highest = events.reduce((top, event) => Math.max(top, event.id), 0);
	const floor = Math.max(cursor.floor, highest - LATE_ID_WINDOW);
	const seen = uniqueSorted([...cursor.seen, ...events.map((event) => event.id)].filter((id) => id > floor));
	const emitted = new Set(events.map((event) => event.id));

	const offsets: Record<string, number> = {};
	for (const { filter, result } of scans) {
		if (result.order !== 'oldest-first') continue;
		// The next poll starts at the first event it may still need: one not emitted above the new floor.
		let first = result.end;
		for (const [id, position] of result.positions) {
			if (id > floor && !emitted.has(id)) first = Math.min(first, position);
		}
		for (const id of seen) {
			const position = result.positions.get(id);
			if (position !== undefined) first = Math.min(first, position);
		}
		offsets[filterKey(filter)] = Math.max(0, first - 1);
	}
	return { events, cursor: { ...cursor, floor, seen, offsets } };
}
