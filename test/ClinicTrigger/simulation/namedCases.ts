/**
 * Hand-built worlds beside the random ones: each case a service or an operator really
 * produces, in the words of the trigger's issue, played in the same model.
 */
import type { Version } from './n8n';
import type { ServiceShape } from './service';
import type { Verdict, World, WorldSetup } from './world';

export interface NamedCase {
	name: string;
	versions: Version[];
	seed: number;
	setup: Omit<WorldSetup, 'version'>;
	script: (world: World) => void;
	check?: (verdict: Verdict) => void;
}

const service = (shape: Partial<ServiceShape> = {}): ServiceShape => ({
	order: 'oldest-first',
	pageCap: 100,
	readMs: (r) => r.int(5, 40),
	readFailure: 0,
	waitMs: 10_000,
	retryMs: [1_000, 5_000, 25_000],
	copyAtOnce: 0,
	copyLater: 0,
	...shape,
});

const base = (shape: Partial<ServiceShape> = {}, more: Partial<WorldSetup> = {}): Omit<WorldSetup, 'version'> => ({
	processes: 1,
	shape: service(shape),
	refuseRuns: 0,
	storeMs: [10, 100],
	saveMs: [1, 20],
	durationMs: 60_000,
	quietMs: 5 * 60_000,
	...more,
});

const wait = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

const lateCommit = (order: ServiceShape['order']): NamedCase => ({
	name: `a late commit behind 400 events of other kinds runs once (${order})`,
	versions: [1, 2],
	seed: 11,
	setup: base({ order }),
	script: (world) => {
		world.at(1_000, () => world.emitOurs());
		world.at(5_000, () => {
			world.emitOurs(6_000);
			world.emitOthers(400);
			world.emitOurs();
		});
		world.at(20_000, () => world.emitOurs());
	},
});

export const namedCases: NamedCase[] = [
	lateCommit('oldest-first'),
	lateCommit('newest-first'),
	{
		name: 'a log slow on every read (3 s): 100 events, each delivered twice, the service waiting 10 s',
		versions: [1, 2],
		seed: 12,
		setup: base({ readMs: () => 3_000, copyAtOnce: 1, waitMs: 10_000 }, { quietMs: 10 * 60_000 }),
		script: (world) => {
			for (let i = 0; i < 100; i++) world.at(1_000 + i * 400, () => world.emitOurs());
		},
	},
	{
		name: 'a backlog of 1,200 behind a slow log of small pages runs completely once deliveries resume (service waiting 5 s)',
		versions: [1, 2],
		seed: 13,
		setup: base({ pageCap: 30, readMs: () => 250, waitMs: 5_000, retryMs: [5_000, 30_000, 120_000] }, { durationMs: 30_000, quietMs: 10 * 60_000 }),
		script: (world) => {
			world.at(0, () => {
				world.service.delivering = false;
				for (let i = 0; i < 1_200; i++) world.emitOurs();
			});
			world.at(10_000, () => {
				world.service.delivering = true;
				for (let i = 0; i < 5; i++) world.emitOurs();
			});
		},
		check: (verdict) => expect(Math.max(...verdict.runSizes)).toBeLessThanOrEqual(200),
	},
	{
		name: 'a burst of 300 events, each delivered twice at once: deliveries arriving together share reads of the log',
		versions: [1, 2],
		seed: 20,
		setup: base({ copyAtOnce: 1, readMs: (r) => r.int(50, 400), retryMs: [700, 700, 700] }, { storeMs: [200, 1_500] }),
		script: (world) => {
			for (let i = 0; i < 300; i++) world.at(1_000 + i * 3, () => world.emitOurs());
		},
		check: (verdict) => {
			// One read under way and one going on after its delivery was answered, at most.
			expect(verdict.logReads.mostAtOnce).toBeLessThanOrEqual(2);
			expect(verdict.logReads.count).toBeLessThan(verdict.deliveryTries / 2);
			// n8n writes static data that a delivery wrote to: deliveries that run nothing write nothing.
			expect(verdict.staticDataSaves).toBeLessThan(verdict.deliveryTries / 4);
			// The log answers within 400 ms: every delivery is answered 200.
			expect(verdict.answered503).toBe(0);
		},
	},
	{
		name: 'a burst logged at once: 100 events, each delivered twice, every delivery at the same moment',
		versions: [1, 2],
		seed: 21,
		setup: base({ copyAtOnce: 1, readMs: (r) => r.int(20, 200), retryMs: [700, 700, 700] }, { storeMs: [200, 1_500] }),
		script: (world) => {
			world.at(1_000, () => {
				for (let i = 0; i < 100; i++) world.emitOurs();
			});
		},
		check: (verdict) => {
			expect(verdict.answered503).toBe(0);
			expect(verdict.logReads.count).toBeLessThan(verdict.deliveryTries / 2);
		},
	},
	{
		name: 'an Event Log Trigger polling in the same workflow makes nothing run twice',
		versions: [1, 2],
		seed: 14,
		setup: base({}, { pollEveryMs: 7_000 }),
		script: (world) => {
			for (let i = 0; i < 12; i++) world.at(1_000 + i * 4_000, () => world.emitOurs());
		},
		// The poller's saves set the Clinic Trigger's cursor back: the trigger says so, once.
		check: (verdict) => expect(verdict.warnings.filter((warning) => warning.includes('saved an older copy'))).toHaveLength(1),
	},
	{
		name: 'n8n killed in the middle of a burst loses nothing (n8n 1.x loses the run it answered and had not stored)',
		versions: [1, 2],
		seed: 15,
		setup: base({ copyAtOnce: 0.5, retryMs: [3_000, 10_000, 30_000] }, { storeMs: [200, 800] }),
		script: (world) => {
			for (let i = 0; i < 30; i++) world.at(1_000 + i * 150, () => world.emitOurs());
			world.at(3_200, () => world.kill(0, 4_000));
		},
	},
	{
		name: 'an active workflow saved three times while events arrive loses none',
		versions: [1, 2],
		seed: 16,
		setup: base(),
		script: (world) => {
			for (let i = 0; i < 20; i++) world.at(1_000 + i * 700, () => world.emitOurs());
			world.at(3_000, async () => {
				for (let i = 0; i < 3; i++) {
					await world.n8n.deactivate();
					await wait(300);
					await world.n8n.activate();
					await wait(2_000);
				}
			});
		},
	},
	{
		name: "a refused run's events run with the service's retry",
		versions: [2],
		seed: 17,
		setup: base({ copyAtOnce: 1 }, { refuseRuns: 0.5 }),
		script: (world) => {
			for (let i = 0; i < 10; i++) world.at(1_000 + i * 2_000, () => world.emitOurs());
		},
	},
	{
		name: 'a connection the service closes while n8n stores the run runs nothing twice',
		versions: [2],
		seed: 18,
		setup: base({ waitMs: 5_000, copyLater: 1 }, { storeMs: [4_000, 7_000] }),
		script: (world) => {
			for (let i = 0; i < 6; i++) world.at(1_000 + i * 9_000, () => world.emitOurs());
		},
	},
	{
		name: "queue mode's webhook processors: copies seconds apart lose nothing",
		versions: [1, 2],
		seed: 19,
		setup: base({ copyAtOnce: 0.5, copyLater: 0.5 }, { processes: 3 }),
		script: (world) => {
			for (let i = 0; i < 25; i++) world.at(1_000 + i * 1_000, () => world.emitOurs());
		},
	},
];
