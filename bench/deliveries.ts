/**
 * (5) Signed deliveries into the Clinic Trigger and its peers (bench/lib/receivers.ts) on one
 * running n8n (`n8n start`, every workflow active):
 * - a steady stream: 2,000 deliveries each, sent from the benchmark process over keep-alive
 *   connections, 16 in flight, signed as the service signs them;
 * - 200 exact copies of accepted deliveries: the Clinic Trigger must start nothing;
 * - a burst, as the service sends after an outage: 300 events at once, each delivered twice
 *   at once (executions, time until all finished, peak RSS);
 * - the Clinic Trigger and the Webhook node with Header Auth again under two of n8n's
 *   experimental expression-engine settings (n8n restarted with each).
 *
 * Each Clinic Trigger delivery is of an event in the simulator's event log, logged just
 * before it is sent (as the service logs an event, then delivers it), on a log of 5,000
 * earlier events of the kind: the duplicate check reads the end of that log.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

import type { Bench, Sample, SectionResult } from './lib/bench';
import { importAll, medianOf, roundLabel } from './lib/bench';
import { accepted, markedDuplicate, measureRun, startedRuns, type RunResult } from './lib/deliveryRuns';
import { executionCounts } from './lib/executions';
import { burstAtDefaultsReport, deliveriesReport, type DeliveryFigures } from './lib/deliveriesReport';
import type { Answer } from './lib/sender';
import { RECEIVERS, addresses, deliveryLog, receiverSetup, type Receiver } from './lib/receivers';
import { clinicCredential } from './lib/workflows';
import { startN8n, type N8nServer } from '../test/e2e/harness';

/** Executions of the do-it-yourself workflow whose Remove Duplicates node let an item through (the signature matched, the body was new). */
async function passedRemoveDuplicates(server: N8nServer, workflowId: string, skip: Set<string>): Promise<{ ids: string[]; passed: number }> {
	const executions = (await server.listExecutions(workflowId, { includeData: true })).filter((e) => !skip.has(String(e.id)));
	const passed = executions.filter((e) => {
		const runs = (e.data as { resultData?: { runData?: Record<string, Array<{ data?: { main?: unknown[][] } }>> } } | undefined)?.resultData?.runData?.['Remove Duplicates'];
		return (runs?.[0]?.data?.main?.[0]?.length ?? 0) > 0;
	}).length;
	return { ids: executions.map((e) => String(e.id)), passed };
}

const CONCURRENCY = 16;
const BURST_EVENTS = 300;
/**
 * n8n's own setting for bursts of production executions: at most 16 run at once, the rest
 * wait in n8n's queue (deliveries are still answered on receipt). Without it, n8n 2.41 on
 * sqlite started ~1,900 executions at once (5.5 GB RSS) and some never finished.
 */
export const SERVER_ENV = { N8N_CONCURRENCY_PRODUCTION_LIMIT: '16' };
export const LOGGED_BEFORE = 5000;
/** The repeats copy the newest accepted deliveries (a retry comes soon after). */
export const REPEATED_DELIVERIES = 40;
/**
 * n8n's expression-engine settings an operator may change, each measured on its own n8n start:
 * lazy acquire (2.x only; the expression runtime's README lists it under "Experimental") and
 * the legacy engine (n8n warns it "is no longer considered secure, and will be removed").
 */
export const FLAG_SETUPS: Array<{ label: string; env: Record<string, string>; fromMajor: number }> = [
	{ label: 'N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true', env: { N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'true' }, fromMajor: 2 },
	{ label: 'N8N_EXPRESSION_ENGINE=legacy', env: { N8N_EXPRESSION_ENGINE: 'legacy' }, fromMajor: 1 },
];
const FLAG_RECEIVERS: Receiver[] = ['trigger', 'diy', 'webhookHeaderAuth'];

/** The bare trigger's package (bench/fixtures/bare-trigger), packed for installing. */
function packBareTrigger(destination: string): string {
	const folder = join(__dirname, 'fixtures', 'bare-trigger');
	const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', destination], { cwd: folder, encoding: 'utf8' }).trim().split('\n').pop()!;
	return join(destination, name);
}

/**
 * Section 5, or with `atDefaults` section 10: only the burst, into the Clinic Trigger, the bare
 * trigger and the Webhook node, with n8n's own defaults (no production concurrency limit:
 * each delivery's execution starts at once, as in an n8n nobody tuned).
 */
export async function measureDeliveries(bench: Bench, atDefaults = false): Promise<SectionResult> {
	const { sim, options, ctx } = bench;
	const count = options.quick ? 300 : 2000;
	const duplicates = options.quick ? 50 : 200;
	// A round is minutes (each delivery is a saved execution): at most 3 measured rounds.
	const measuredRounds = Math.min(options.runs, 3);
	const deliveriesIn = (round: number) => (round === 0 ? Math.ceil(count / 10) : count);
	const { logEvent, bodies } = deliveryLog(sim, LOGGED_BEFORE);

	const credential = clinicCredential(sim, 'bench 5');
	const setup = receiverSetup(credential, 1.1);
	ctx.installPackage(packBareTrigger(ctx.rootDir));
	await importAll(bench, [credential, setup.headerAuth], Object.values(setup.workflows));

	const major = Number(options.version.split('.')[0]);
	const figures: DeliveryFigures = { count, duplicates, measuredRounds, warmUp: deliveriesIn(0), concurrency: CONCURRENCY, burstEvents: BURST_EVENTS, steady: {}, flags: {}, burst: {}, flagBursts: {}, problems: [], diy: { sent: 0, passed: 0, burstPassed: 0 }, repeats: { started: 0, marked: 0, allAccepted: false }, bodyBytes: bodies('size', 1)[0].length };
	bench.log(`[${atDefaults ? 10 : 5}] starting n8n`);
	let env: Record<string, string> = atDefaults ? {} : SERVER_ENV;
	let server: N8nServer = await startN8n(ctx, { env });
	/** n8n stopped and started again with `env` (the workflows stay active). */
	const restart = async (withEnv: Record<string, string>) => {
		env = withEnv;
		await server.stop();
		server = await startN8n(ctx, { env });
		// n8n 1.x says it is ready before its database is ("Database is not ready!", 503).
		const until = Date.now() + 60_000;
		while (!(await executionCounts(server, setup.workflows.trigger.id!).then(() => true, () => false)) && Date.now() < until) {
			await new Promise((resolve) => setTimeout(resolve, 500));
		}
	};
	try {
		for (const receiver of RECEIVERS) await server.activateWorkflow(setup.workflows[receiver].id!);
		/** The trigger starts one execution per delivery it accepts as new; the others one per accepted delivery. */
		const expectedRuns = (receiver: Receiver) => (answers: Answer[]) => startedRuns(answers, receiver === 'trigger');
		/** `loggedFirst`: events the service logged before sending any (else each is logged as it is sent). */
		const run = async (receiver: Receiver, label: string, sent: Buffer[], concurrency: number, loggedFirst?: Buffer[]): Promise<RunResult> => {
			loggedFirst?.forEach(logEvent);
			const beforeSend = receiver === 'trigger' && !loggedFirst ? (i: number) => logEvent(sent[i]) : undefined;
			const target = { server, workflowId: setup.workflows[receiver].id!, address: addresses(setup, server, sim)[receiver], beforeSend };
			const result = await measureRun(bench, label, target, sent, concurrency, expectedRuns(receiver));
			figures.problems.push(...result.problems.map((text) => ({ receiver, text })));
			return result;
		};
		const stream = async (receivers: Receiver[], into: Partial<Record<Receiver, Sample[]>>, tag: string) => {
			for (let round = 0; round <= measuredRounds; round++) {
				for (const receiver of receivers) {
					const label = `${tag}${receiver} ${roundLabel(round, measuredRounds)}`;
					const result = await run(receiver, label, bodies(`${tag}${receiver}-${round}`, deliveriesIn(round)), CONCURRENCY);
					if (round > 0) (into[receiver] ??= []).push(result.sample);
				}
			}
		};

		/**
		 * The burst: every event logged, then both copies of each sent at once, each receiver on
		 * a freshly started n8n (a burst leaves n8n's RSS high for minutes: the next one would
		 * start from there).
		 */
		const burst = async (receivers: Receiver[], into: DeliveryFigures['burst'], tag: string) => {
			for (const receiver of receivers) {
				await restart(env);
				const events = bodies(`${tag}burst-${receiver}`, BURST_EVENTS);
				const twice = events.flatMap((body) => [body, body]);
				const result = await run(receiver, `${tag}${receiver} burst`, twice, twice.length, receiver === 'trigger' ? events : undefined);
				into[receiver] = { sample: result.sample, executions: result.executions };
			}
		};
		if (atDefaults) {
			await burst(['trigger', 'bare', 'webhook'], figures.burst, 'at defaults ');
			for (const receiver of RECEIVERS) await server.deactivateWorkflow(setup.workflows[receiver].id!);
			return burstAtDefaultsReport(figures, options.version);
		}
		await stream(RECEIVERS, figures.steady, '');
		const diyId = setup.workflows.diy.id!;
		const diySteady = await passedRemoveDuplicates(server, diyId, new Set());
		figures.diy = { sent: diySteady.ids.length, passed: diySteady.passed, burstPassed: 0 };

		// Exact copies of accepted deliveries (same bytes, same signature) into the Clinic Trigger.
		const last = bodies(`trigger-${measuredRounds}`, count).slice(-REPEATED_DELIVERIES);
		const copies = Array.from({ length: duplicates }, (_, i) => last[i % last.length]);
		const repeats = await run('trigger', 'trigger repeats', copies, CONCURRENCY, []);
		figures.repeats = { started: repeats.executions, marked: repeats.answers.filter(markedDuplicate).length, allAccepted: repeats.answers.every(accepted) };

		// The bare trigger: what n8n costs any community trigger under a burst, before its own work.
		await burst(['trigger', 'diy', 'bare', 'webhook'], figures.burst, '');
		figures.diy.burstPassed = (await passedRemoveDuplicates(server, diyId, new Set(diySteady.ids))).passed;

		for (const flag of FLAG_SETUPS) {
			if (major < flag.fromMajor) continue;
			bench.log(`[5] restarting n8n with ${flag.label}`);
			await restart({ ...SERVER_ENV, ...flag.env });
			await stream(FLAG_RECEIVERS, (figures.flags[flag.label] = {}), `${flag.label} `);
			await burst(['trigger', 'webhook'], (figures.flagBursts[flag.label] = {}), `${flag.label} `);
		}
		for (const receiver of RECEIVERS) await server.deactivateWorkflow(setup.workflows[receiver].id!);
	} finally {
		await server.stop();
	}
	return deliveriesReport(figures, options.version, (samples, key) => medianOf(samples, key));
}

