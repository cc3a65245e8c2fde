/**
 * How the end-to-end tests count the Event Log Trigger's runs (test/e2e/support/eventLog.ts),
 * against the simulator and a stand-in for n8n's runs list: with `nextPoll` the count waits
 * for a read of the log that came after the runs were stored, so a repeat that read brings
 * is counted; a count taken as soon as the ids are there would not see it.
 */
import { startSimulator } from '../simulator';
import type { Simulator } from '../simulator/types';
import type { Execution, N8nServer } from '../e2e/harness';
import { EVENT_LOG_TRIGGER, eventLogRuns, idsPerRun, lastEventLogRead } from '../e2e/support/eventLog';

let sim: Simulator;

beforeAll(async () => {
	sim = await startSimulator();
});
afterAll(async () => {
	await sim.close();
});
beforeEach(() => {
	sim.reset();
});

let runId = 0;
/**
 * A run as n8n lists it. One still going holds no output of the trigger yet (n8n stores the
 * poll's items as the node's input until it runs), unless `triggerRan` says it did.
 */
const run = (eventIds: number[], status = 'success', triggerRan = !['running', 'new', 'waiting'].includes(status)): Execution =>
	({
		id: String((runId += 1)),
		workflowId: 'wf',
		mode: 'trigger',
		status,
		finished: status === 'success',
		startedAt: new Date().toISOString(),
		stoppedAt: null,
		data: {
			resultData: { runData: triggerRan ? { [EVENT_LOG_TRIGGER]: [{ data: { main: [eventIds.map((eventId) => ({ json: { eventId } }))] } }] } : {} },
		},
	}) as unknown as Execution;

/**
 * n8n's runs list, newest first, and how often it was read. `hold()` makes the next reads of
 * the list wait until `release()`, so a test decides what n8n stored by the time it answers.
 */
function runsList() {
	const runs: Execution[] = [];
	let held: Promise<void> | undefined;
	let release = () => {};
	const list = {
		runs,
		reads: 0,
		hold() {
			held = new Promise((resolve) => (release = resolve));
		},
		release: () => release(),
		server: undefined as unknown as N8nServer,
	};
	list.server = {
		listExecutions: async () => {
			if (held) await held;
			list.reads += 1;
			return [...runs];
		},
	} as unknown as N8nServer;
	return list;
}

/** One read of the event log, as the trigger makes it (GET /events with the integration's token). */
async function readLog(): Promise<number> {
	const token = await fetch(`${sim.apiBaseUrl}/oauth/token`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ grant_type: 'password', username: sim.demo.username, password: sim.demo.password }),
	});
	const { access_token: accessToken } = (await token.json()) as { access_token: string };
	const answer = await fetch(`${sim.webhooksBaseUrl}/events?topic=${sim.topicPrefix}.consultation`, {
		headers: { authorization: `Bearer ${accessToken}` },
	});
	await answer.text();
	return answer.status;
}

/** The simulator, counting how often the count looked at its request log. */
function watched(): { sim: Simulator; looks: () => number } {
	let looks = 0;
	const proxy = new Proxy(sim, {
		get(target, property) {
			if (property === 'log') looks += 1;
			return Reflect.get(target, property, target) as unknown;
		},
	});
	return { sim: proxy, looks: () => looks };
}

/** Resolves once `check` holds. */
async function until(check: () => boolean): Promise<void> {
	while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe('counting Event Log Trigger runs in the end-to-end tests', () => {
	test('the newest answered read of the event log: only GET /events with a 2xx counts', async () => {
		expect(lastEventLogRead(sim)).toBe(0);
		expect(await readLog()).toBe(200);
		const first = lastEventLogRead(sim);
		expect(first).toBeGreaterThan(0);
		// A refused read (no token) took nothing from the log.
		await (await fetch(`${sim.webhooksBaseUrl}/events`)).text();
		expect(sim.log.at(-1)).toMatchObject({ path: '/events', status: 401 });
		expect(lastEventLogRead(sim)).toBe(first);
		expect(await readLog()).toBe(200);
		expect(lastEventLogRead(sim)).toBeGreaterThan(first);
	});

	test('ids per finished run, oldest run first; a run still going is left out', () => {
		const runs = [run([9], 'running'), run([3, 4]), run([1, 2])];
		expect(idsPerRun(runs)).toEqual([
			[1, 2],
			[3, 4],
		]);
	});

	test("a run n8n still lists as running after its trigger ran counts (n8n 1.123's queue mode can leave it so)", () => {
		const runs = [run([9], 'running', true), run([3, 4])];
		expect(idsPerRun(runs)).toEqual([[3, 4], [9]]);
	});

	test('with nextPoll: waits for a later read and counts the repeat it brought', async () => {
		const list = runsList();
		const e1 = (await sim.emit('consultation', 'consultation-finished', { id: 1 })).id;
		await readLog(); // the poll that took e1
		list.runs.unshift(run([e1]));
		let counted: Execution[] | undefined;
		const log = watched();
		const counting = eventLogRuns(log.sim, list.server, 'wf', 1, { nextPoll: true, intervalMs: 5, timeoutMs: 10_000 }).then((runs) => {
			counted = runs;
		});
		// The ids are there; without a later read the count does not answer, however often it looks.
		await until(() => log.looks() >= 5);
		expect(list.reads).toBe(1);
		expect(counted).toBeUndefined();
		// The next poll reads the log and, wrongly, starts a run with e1 again (stored before
		// n8n answers the runs list again).
		list.hold();
		await readLog();
		list.runs.unshift(run([e1]));
		list.release();
		await counting;
		expect(idsPerRun(counted!).flat()).toEqual([e1, e1]);
	});

	test('without nextPoll: answers as soon as the ids are there, before a repeat can show', async () => {
		const list = runsList();
		list.runs.unshift(run([7]));
		const runs = await eventLogRuns(sim, list.server, 'wf', 1, { intervalMs: 5, timeoutMs: 10_000 });
		expect(idsPerRun(runs).flat()).toEqual([7]);
		expect(list.reads).toBe(1);
	});

	test('a run still going when the later read came is waited for', async () => {
		const list = runsList();
		list.runs.unshift(run([5]));
		const log = watched();
		const counting = eventLogRuns(log.sim, list.server, 'wf', 1, { nextPoll: true, intervalMs: 5, timeoutMs: 10_000 });
		await until(() => log.looks() >= 2);
		list.hold();
		await readLog();
		list.runs.unshift(run([5], 'running'));
		list.release();
		const readsThen = list.reads;
		await until(() => list.reads >= readsThen + 3);
		list.runs[0] = { ...run([5]), id: list.runs[0].id };
		expect(idsPerRun(await counting).flat()).toEqual([5, 5]);
	});

	test('ids that never all come: answers what is there at the timeout, without waiting for a read', async () => {
		const list = runsList();
		list.runs.unshift(run([11]));
		const runs = await eventLogRuns(sim, list.server, 'wf', 2, { nextPoll: true, intervalMs: 5, timeoutMs: 50 });
		expect(idsPerRun(runs).flat()).toEqual([11]);
	});
});
