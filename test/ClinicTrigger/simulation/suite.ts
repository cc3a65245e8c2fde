/**
 * The Clinic Trigger's record of what ran, tried against many interleavings in one n8n
 * version's model: seeded random worlds (schedules.ts) and the named cases beside them.
 * One test file per version, so that jest runs the two side by side: 1,300 schedules of
 * 1.x and 700 of 2.x (a world of 2.x costs about twice as much: the trigger sets its cursor
 * every millisecond while n8n stores the run), each file about three minutes of one worker
 * (jest starts them first: test/helpers/simulationsFirst.cjs). A failure prints its seed:
 * `SIM_SEED=<seed>` replays that world alone; `SIM_SCHEDULES=20000` tries that many of each
 * version.
 */
import { randomWorld } from './schedules';
import { namedCases } from './namedCases';
import { packageCopies, runWorld } from './world';
import type { Version } from './n8n';

const SCHEDULES: Record<Version, number> = { 1: 1_300, 2: 700 };
/**
 * Seeds beyond the default count that once failed, tried at every run. Both are backlogs behind a slow log of 3-event
 * pages: 2003211, a refused run; 1016307, a read that went on past its deadline from behind a run n8n had not answered.
 */
const FOUND_FAILING: Record<Version, number[]> = { 1: [1_016_307], 2: [2_003_211] };
const ONLY_SEED = process.env.SIM_SEED === undefined ? undefined : Number(process.env.SIM_SEED);

export function describeSimulation(version: Version): void {
	jest.setTimeout(15 * 60_000);

	describe(`the Clinic Trigger in n8n ${version}.x, simulated`, () => {
		const copies = packageCopies(3);

		beforeAll(() => jest.useFakeTimers({ now: Date.UTC(2026, 11, 5, 9), doNotFake: ['nextTick', 'queueMicrotask'] }));
		afterAll(() => jest.useRealTimers());

		for (const named of namedCases) {
			if (!named.versions.includes(version)) continue;
			it(named.name, async () => {
				const verdict = await runWorld(named.seed, { ...named.setup, version }, copies, named.script);
				expect(verdict.violations).toEqual([]);
				named.check?.(verdict);
			});
		}

		const schedules = Number(process.env.SIM_SCHEDULES ?? SCHEDULES[version]);
		it(`keeps its invariants over ${ONLY_SEED === undefined ? schedules : 1} random schedules`, async () => {
			// A seed names its version: 1000000 and up for 1.x, 2000000 and up for 2.x.
			if (ONLY_SEED !== undefined && Math.floor(ONLY_SEED / 1_000_000) !== version) return;
			const seeds = ONLY_SEED === undefined ? [...FOUND_FAILING[version], ...Array.from({ length: schedules }, (_, i) => version * 1_000_000 + i)] : [ONLY_SEED];
			const failures: string[] = [];
			for (const seed of seeds) {
				const { setup, script, summary } = randomWorld(seed, version);
				const verdict = await runWorld(seed, setup, copies, script);
				if (verdict.violations.length > 0) failures.push(`SIM_SEED=${seed} (${summary}): ${verdict.violations.slice(0, 3).join('; ')}`);
				if (failures.length >= 5) break;
			}
			expect(failures).toEqual([]);
			// A world of 2.x takes about 50 ms on two cores: `SIM_SCHEDULES=20000` needs more than the default 15 minutes.
		}, Math.max(15 * 60_000, schedules * 1_000));
	});
}
