/**
 * (12) The Clinic Trigger's reads of the event log: `GET /events` requests per delivery, for a
 * short and a long log of the trigger's event kind, listed oldest first and newest first. Per
 * case a fresh `n8n start` with the trigger active; 3 deliveries warm it up (its first read
 * and sign-in), then 10 deliveries one after the other and a burst of 100 events each
 * delivered twice at once, every event logged just before it is sent (as the service does).
 * The requests are those the simulator saw while each part ran.
 */
import type { Bench, Goal, SectionResult } from './lib/bench';
import { importAll } from './lib/bench';
import { notAcceptedSummary, startedRuns } from './lib/deliveryRuns';
import { addresses, deliveryLog, receiverSetup } from './lib/receivers';
import { sendAll } from './lib/sender';
import { table } from './lib/stats';
import { clinicCredential } from './lib/workflows';
import { SERVER_ENV } from './deliveries';
import { ANSWER_WITHIN_MS } from '../nodes/ClinicTrigger/newEvents';
import { startN8n, waitFor } from '../test/e2e/harness';

const ORDERS = ['oldest-first', 'newest-first'] as const;
const WARM_UP = 3;
const ONE_BY_ONE = 10;
const BURST_EVENTS = 100;

type Row = { order: string; logged: number; oneByOne: number; burst: number; runs: number; burstRefused: string };

export async function measureLogReads(bench: Bench): Promise<SectionResult> {
	const { sim, options, ctx } = bench;
	const sizes = [20, options.quick ? 2_000 : 20_000];
	const rows: Row[] = [];
	const problems: string[] = [];
	for (const order of ORDERS) {
		for (const logged of sizes) {
			const { logEvent, bodies } = deliveryLog(sim, logged);
			sim.setEventOrder(order);
			const credential = clinicCredential(sim, `bench 12 ${order} ${logged}`);
			const setup = receiverSetup(credential, 1.1);
			await importAll(bench, [credential], [setup.workflows.trigger]);
			bench.log(`[12] ${order}, ${logged} events logged: starting n8n`);
			const server = await startN8n(ctx, { env: SERVER_ENV });
			try {
				await server.activateWorkflow(setup.workflows.trigger.id!);
				if (ctx.asyncPublication) await server.waitForPublication(setup.workflows.trigger.id!);
				const target = addresses(setup, server, sim).trigger;
				const send = async (sent: Buffer[], concurrency: number, logFirst: boolean) => {
					if (logFirst) sent.forEach(logEvent);
					sim.clearLog();
					const { answers } = await sendAll(target.url, sent, target.headers, concurrency, logFirst ? undefined : (i) => logEvent(sent[i]));
					const reads = sim.log.filter((entry) => entry.path === '/events').length;
					const refused = notAcceptedSummary(answers);
					// One by one, every delivery is accepted; in a burst the service tries a 503 again (counted in the table).
					if (refused && concurrency === 1) problems.push(`${order}, ${logged} logged, deliveries one by one not accepted: ${refused}`);
					return { reads, refused: refused ?? '0', runs: startedRuns(answers) };
				};
				await send(bodies('warm-up', WARM_UP), 1, false);
				const oneByOne = await send(bodies('one-by-one', ONE_BY_ONE), 1, false);
				const events = bodies('burst', BURST_EVENTS);
				const burst = await send(
					events.flatMap((body) => [body, body]),
					BURST_EVENTS * 2,
					true,
				);
				rows.push({ order, logged, oneByOne: oneByOne.reads / ONE_BY_ONE, burst: burst.reads, runs: burst.runs, burstRefused: burst.refused });
				bench.log(`[12] ${order}, ${logged}: ${oneByOne.reads} GET /events for ${ONE_BY_ONE} deliveries one by one; ${burst.reads} for a burst of ${BURST_EVENTS * 2}`);
				// After a burst n8n may answer "Database is not ready!" for a while (its database ping timed out).
				const deactivated = async () =>
					await server.deactivateWorkflow(setup.workflows.trigger.id!).then(
						() => true,
						(error: Error) => {
							if (!/Database is not ready/.test(error.message)) throw error;
							return undefined;
						},
					);
				await waitFor('the workflow deactivated', deactivated, { timeoutMs: 120_000, intervalMs: 2_000 });
			} finally {
				await server.stop();
			}
		}
	}
	const worst = Math.max(...rows.map((row) => row.oneByOne));
	const goals: Goal[] = [
		{
			text: '(12) Once warm, the Clinic Trigger reads the log with at most 2 `GET /events` per delivery, short or long log, either order',
			met: rows.length === ORDERS.length * sizes.length && problems.length === 0 ? worst <= 2 : undefined,
			detail: problems.length > 0 ? problems.join('; ') : `at most ${worst.toFixed(1)} per delivery`,
		},
	];
	const markdown = [
		`A fresh \`n8n start\` per case, the Clinic Trigger active, its event kind logged ${sizes.join(' or ')} times before; ${WARM_UP} ` +
			`deliveries warm it up, then ${ONE_BY_ONE} deliveries one after the other and a burst of ${BURST_EVENTS} events each ` +
			'delivered twice at once. `GET /events`: the requests the simulator saw while each part ran. ' +
			`The ${BURST_EVENTS * 2} deliveries of the burst reach ` +
			`n8n in the same moment: a delivery whose read of the log has not ended within ${ANSWER_WITHIN_MS / 1000} s of n8n handing it to the trigger (n8n's work ` +
			'on the other deliveries delays the reads) is answered `503`, and the service tries it again.',
		'',
		table(
			['List order', 'events logged', 'GET /events per delivery, one by one', 'GET /events for the burst', 'per burst delivery', 'runs of the burst', 'burst deliveries not accepted'],
			rows.map((row) => [row.order, String(row.logged), row.oneByOne.toFixed(1), String(row.burst), (row.burst / (BURST_EVENTS * 2)).toFixed(2), String(row.runs), row.burstRefused]),
		),
	].join('\n');
	return { title: "12. The Clinic Trigger's reads of the event log", markdown, goals };
}
