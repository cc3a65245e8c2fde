/**
 * Random worlds from a seed: the service's shape (list order, page cap, fast, slow or odd
 * reads, failures, how long it waits, its retry schedule, copies), n8n's (processes,
 * refused runs, a slow store or database write, a poller in the workflow), and a script of events, late
 * commits, bulk imports of other kinds, a stopped subscription's backlog, kills and saves.
 * None of it is tuned to how the trigger works: where the service's behaviour is not
 * specified, the fast, the slow and the odd case are all drawn.
 */
import type { Version } from './n8n';
import { Random } from './random';
import type { ServiceShape } from './service';
import type { World, WorldSetup } from './world';

export function randomWorld(seed: number, version: Version): { setup: WorldSetup; script: (world: World) => void; summary: string } {
	const r = new Random(seed ^ 0x5bd1e995);
	const speed = r.pick(['fast', 'slow', 'odd'] as const);
	const readMs = { fast: (x: Random) => x.int(2, 60), slow: (x: Random) => x.int(400, 3000), odd: (x: Random) => (x.chance(0.1) ? x.int(3000, 8000) : x.int(2, 200)) }[speed];
	const shape: ServiceShape = {
		order: r.pick(['oldest-first', 'newest-first'] as const),
		pageCap: r.pick([3, 10, 25, 100]),
		readMs,
		readFailure: r.pick([0, 0, 0.15]),
		waitMs: r.pick([5_000, 10_000, 30_000]),
		retryMs: r.pick([[1_000, 5_000, 25_000], [10_000, 60_000, 300_000], [500], [2_000, 2_000, 2_000, 2_000, 2_000]]),
		copyAtOnce: r.pick([0, 0.3]),
		copyLater: r.pick([0, 0.3]),
	};
	const processes = r.chance(0.35) ? r.int(2, 3) : 1;
	const setup: WorldSetup = {
		version,
		processes,
		shape,
		pollEveryMs: r.chance(0.25) ? r.pick([10_000, 45_000]) : undefined,
		refuseRuns: version === 2 && r.chance(0.3) ? 0.2 : 0,
		storeMs: [10, r.pick([100, 1_500])],
		saveMs: [1, r.chance(0.15) ? 1_500 : 20],
		durationMs: 100_000,
		quietMs: 8 * 60_000,
	};
	const events = r.int(2, 30);
	const lateShare = r.pick([0, 0.2]);
	const bulk = r.chance(0.3) ? r.int(50, 400) : 0;
	const kill = r.chance(0.25) ? { process: r.int(0, processes - 1), at: r.int(1_000, 60_000), down: r.int(500, 20_000) } : undefined;
	const republish = !kill && r.chance(0.2) ? { at: r.int(1_000, 60_000), gap: r.int(0, 3_000), times: r.int(1, 3) } : undefined;
	const backlog = r.chance(0.15) ? { from: r.int(0, 20_000), events: r.int(20, 200), lasts: r.int(10_000, 40_000) } : undefined;
	const summary = [
		`${shape.order} pages of ${shape.pageCap}, ${speed} reads${shape.readFailure ? ', some failing' : ''}, waits ${shape.waitMs / 1000} s`,
		`${processes} process(es)${setup.pollEveryMs ? ', a poller' : ''}${setup.refuseRuns ? ', refused runs' : ''}`,
		`${events} events${lateShare ? ', late commits' : ''}${bulk ? `, ${bulk} others` : ''}${kill ? `, process ${kill.process} killed at ${kill.at} ms` : ''}${republish ? `, republished ${republish.times}x` : ''}${backlog ? `, a backlog of ${backlog.events}` : ''}`,
	].join('; ');

	const script = (world: World) => {
		for (let i = 0; i < events; i++) {
			const late = world.random.chance(lateShare) ? world.random.int(1_000, 8_000) : 0;
			world.at(world.random.int(0, 60_000), () => world.emitOurs(late));
		}
		if (bulk) world.at(world.random.int(0, 60_000), () => world.emitOthers(bulk));
		if (kill) world.at(kill.at, () => world.kill(kill.process, kill.down));
		if (republish) {
			world.at(republish.at, async () => {
				for (let i = 0; i < republish.times; i++) {
					await world.n8n.deactivate();
					await new Promise((resolve) => setTimeout(resolve, republish.gap));
					await world.n8n.activate();
					await new Promise((resolve) => setTimeout(resolve, world.random.int(500, 5_000)));
				}
			});
		}
		if (backlog) {
			world.at(backlog.from, () => {
				world.service.delivering = false;
				for (let i = 0; i < backlog.events; i++) world.emitOurs();
			});
			world.at(backlog.from + backlog.lasts, () => (world.service.delivering = true));
		}
	};
	return { setup, script, summary };
}
