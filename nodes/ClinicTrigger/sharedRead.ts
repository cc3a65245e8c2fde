/**
 * Deliveries arriving together share one read of the log: one is under way per trigger in a process, and those that
 * arrive meanwhile wait for the next (a read begun before a delivery arrived may miss its event). One delivery runs
 * what the read found; the others are answered as nothing new or, when there is more than a run holds, wait for the next.
 */
import { sleep } from 'n8n-workflow';

import { handlesAll, isHandled, mergeCursors, poll } from '../shared/eventCursor';
import type { Cursor, PollOutcome } from '../shared/eventCursor';
import type { EventLog } from '../shared/eventLog';
import type { EventFilter, EventRecord } from '../shared/eventRecord';

/** How often a read asks for a page that failed. */
const PAGE_TRIES = 5;

/** What a delivery gets: the events it runs (none: another delivery runs them, or none are new), and when it may save one the cursor after them. */
export type Share = { events: EventRecord[]; cursor?: Cursor };

type Waiter = { saved: Cursor; answerBy: number; started: boolean; answered: boolean; resolve: (share: Share) => void; reject: (error: Error) => void };

/** A trigger's reads in process memory (memory.ts): the starting cursor, the newest n8n confirmed, that of the last run it stored alone (no other run in flight), how many runs were handed out, the events of runs not answered yet, the read under way and the deliveries waiting for the next, and what a read that went on past its deadline (or a refused run) found. */
export interface LogReads {
	starting?: Promise<Cursor>;
	confirmed?: Cursor;
	lastRun?: Cursor;
	runsHandedOut?: number;
	unanswered?: Set<number>;
	reportedBehind?: boolean;
	reading?: boolean;
	nextRead?: { waiters: Waiter[]; settings: ReadSettings };
	finishingLate?: boolean;
	readAhead?: Required<Share> & { base: Cursor };
}

interface ReadSettings {
	log: EventLog;
	filters: EventFilter[];
	maxPerRun: number;
	answerWithinMs: number;
}

/** The delivery's share of the next read from `saved`; rejects when the log fails or no read answered by `answerBy`. */
export async function shareOfNextRead(memory: LogReads, settings: ReadSettings, saved: Cursor, answerBy: number): Promise<Share> {
	return await new Promise<Share>((resolve, reject) => {
		const waiter: Waiter = { saved, answerBy, started: false, answered: false, resolve, reject };
		// A read under way answers its deliveries by their time; one still waiting for its read is answered 503 then.
		void sleep(Math.max(0, answerBy - Date.now())).then(() => !waiter.started && answerWaiter(waiter, notInTime(settings)));
		waitForNextRead(memory, settings, waiter);
	});
}

/** `cursor` with everything the newest cursor n8n confirmed in this process handles. */
export const withConfirmed = (memory: LogReads, cursor: Cursor): Cursor => (memory.confirmed ? mergeCursors(cursor, memory.confirmed) : cursor);

const notInTime = (settings: ReadSettings) => new Error(`no answer within ${settings.answerWithinMs / 1000} s`);

function waitForNextRead(memory: LogReads, settings: ReadSettings, waiter: Waiter): void {
	if (Date.now() >= waiter.answerBy) return answerWaiter(waiter, notInTime(settings));
	waiter.started = false;
	const batch = (memory.nextRead ??= { waiters: [], settings });
	batch.waiters.push(waiter);
	if (!memory.reading) void readNext(memory);
}

function answerWaiter(waiter: Waiter, answer: Share | Error): void {
	waiter.answered = true;
	if (answer instanceof Error) waiter.reject(answer);
	else waiter.resolve(answer);
}

async function readNext(memory: LogReads): Promise<void> {
	const batch = memory.nextRead;
	memory.nextRead = undefined;
	const waiters = batch?.waiters.filter((waiter) => !waiter.answered) ?? [];
	if (!batch || waiters.length === 0) return;
	const { settings } = batch;
	memory.reading = true;
	for (const waiter of waiters) waiter.started = true;
	try {
		// With the newest cursor n8n confirmed: runs answered while a delivery waited are past its own copy.
		const saved = withConfirmed(memory, waiters.map((waiter) => waiter.saved).reduce((one, other) => mergeCursors(one, other)));
		const read = await readPast(memory, settings, saved, Math.min(...waiters.map((waiter) => waiter.answerBy)));
		// Decided in one synchronous step, before the next read starts: one delivery runs them, the others find them in its run.
		shareOut(memory, settings, read, waiters);
	} catch (error) {
		for (const waiter of waiters) answerWaiter(waiter, error as Error);
	} finally {
		memory.reading = false;
		void readNext(memory);
	}
}

/** One read from `saved` until `until`: what an earlier read found past its deadline (or a refused run held), then the log after it. One read at a time goes on past its deadline, for the next read. */
async function readPast(memory: LogReads, settings: ReadSettings, saved: Cursor, until: number): Promise<PollOutcome> {
	const ahead = takeReadAhead(memory, saved);
	// A refused run's worth already: handed over as it is (a run holds at most twice `maxPerRun`).
	if (ahead && ahead.events.length >= settings.maxPerRun) return { ...ahead, complete: false, more: true };
	const from = ahead?.cursor ?? saved;
	let lateReadEnded = false;
	const keepLateOutcome = (outcome?: PollOutcome) => {
		lateReadEnded = true;
		memory.finishingLate = false;
		if (outcome) memory.readAhead = { base: from, events: outcome.events, cursor: outcome.cursor };
	};
	// Not while a run is unanswered: this read starts behind it and reads its events again (on a slow log, for minutes).
	const mayFinishLate = !memory.finishingLate && !memory.unanswered?.size;
	// Not new after all: in a run n8n has not answered yet, or in one it confirmed while this read went on.
	const skip = (id: number) => !!memory.unanswered?.has(id) || (!!memory.confirmed && isHandled(memory.confirmed, id));
	// A read that goes on for minutes need not fail for one failed request.
	const fresh = await poll(settings.log, settings.filters, from, settings.maxPerRun, { until, pageTries: PAGE_TRIES, skip, finishAfterDeadline: mayFinishLate ? keepLateOutcome : undefined });
	if (mayFinishLate && !fresh.complete && !lateReadEnded) memory.finishingLate = true;
	return ahead ? { ...fresh, events: [...ahead.events, ...fresh.events] } : fresh;
}

/** Hands the read to its deliveries: events n8n confirmed are not new. None is in a run not answered yet: the read skipped those, and only this hands runs out, one read at a time. */
function shareOut(memory: LogReads, settings: ReadSettings, read: PollOutcome, waiters: Waiter[]): void {
	const unanswered = (memory.unanswered ??= new Set());
	const { confirmed } = memory;
	const cursor = withConfirmed(memory, read.cursor);
	const events = read.events.filter((event) => !confirmed || !isHandled(confirmed, event.id));
	if (events.length === 0 && !read.complete) throw notInTime(settings);
	const [runner, ...others] = events.length > 0 ? waiters : [];
	if (runner) {
		for (const event of events) unanswered.add(event.id);
		answerWaiter(runner, { events, cursor });
	}
	// The log may hold more than this read took (even if all it took ran meanwhile): the other deliveries wait for the next read.
	for (const waiter of runner ? others : waiters) {
		if (read.more) waitForNextRead(memory, settings, waiter);
		else answerWaiter(waiter, events.length === 0 ? { events: [], cursor } : { events: [] });
	}
}

/** Taken once: what a read that went on past its deadline (or a refused run) found that `saved` does not handle, when `saved` handles all it began from. */
function takeReadAhead(memory: LogReads, saved: Cursor): Required<Share> | undefined {
	const ahead = memory.readAhead;
	memory.readAhead = undefined;
	if (!ahead || !handlesAll(saved, ahead.base)) return undefined;
	const events = ahead.events.filter((event) => !isHandled(saved, event.id));
	if (events.some((event) => memory.unanswered?.has(event.id))) return undefined;
	return events.length > 0 ? { events, cursor: mergeCursors(ahead.cursor, saved) } : undefined;
}
