/**
 * One measured run of section 5 against one receiver: a steady stream (deliveries sent with
 * a fixed number in flight) or a burst (every delivery at once, each event twice). Each run
 * starts after n8n was left idle (V8 gives memory back a few seconds into an idle period, so
 * each receiver's peak RSS starts from a settled process), and ends once n8n reports every
 * execution it started finished.
 */
import type { Bench, Sample } from './bench';
import { executionCounts, settle } from './executions';
import { RssSampler, currentRss } from './proc';
import type { Address } from './receivers';
import { sendAll, type Answer } from './sender';
import { fmt, mib, perSecond } from './stats';
import type { N8nServer } from '../../test/e2e/harness';

const IDLE_BEFORE_RUN_MS = 15_000;
export const IDLE_BEFORE_RUN_S = IDLE_BEFORE_RUN_MS / 1000;

export const accepted = (answer: Answer) => answer.status >= 200 && answer.status < 300;
export const markedDuplicate = (answer: Answer) => (answer.body as { duplicate?: boolean } | undefined)?.duplicate === true;
/** The runs these answers started: every accepted one, except the Clinic Trigger's answers to a delivery that starts nothing. */
export const startedRuns = (answers: Answer[], trigger = true) => answers.filter((a) => accepted(a) && (!trigger || !markedDuplicate(a))).length;
/** The answers not accepted, as "N (answers 503,500)"; undefined when all were. */
export function notAcceptedSummary(answers: Answer[]): string | undefined {
	const notAccepted = answers.filter((a) => !accepted(a));
	return notAccepted.length > 0 ? `${notAccepted.length} (answers ${[...new Set(notAccepted.map((a) => a.status))].join(',')})` : undefined;
}

export interface RunTarget {
	server: N8nServer;
	workflowId: string;
	address: Address;
	/** Runs before the body at `index` is sent (the service logging the event it delivers). */
	beforeSend?: (index: number) => void;
}

export interface RunResult {
	sample: Sample;
	/** Executions the run started (all statuses). */
	executions: number;
	answers: Answer[];
	problems: string[];
}

const total = (counts: { success: number; failed: number; pending: number }) => counts.success + counts.failed + counts.pending;

/**
 * Sends `bodies` (in flight at most `concurrency`) and waits until `expectedRuns(answers)`
 * more executions finished; then 3 s more, so that an execution nobody expected is counted.
 */
export async function measureRun(
	bench: Bench,
	label: string,
	target: RunTarget,
	bodies: Buffer[],
	concurrency: number,
	expectedRuns: (answers: Answer[]) => number,
	options: { idle?: boolean } = {},
): Promise<RunResult> {
	const { server, workflowId, address } = target;
	const pid = server.pid!;
	if (options.idle !== false) await new Promise((resolve) => setTimeout(resolve, IDLE_BEFORE_RUN_MS));
	const before = total(await executionCounts(server, workflowId));
	const startRss = currentRss(pid);
	const rss = new RssSampler(pid);
	const started = Date.now();
	const sent = await sendAll(address.url, bodies, address.headers, concurrency, target.beforeSend);
	const problems: string[] = [];
	const notAccepted = notAcceptedSummary(sent.answers);
	if (notAccepted) problems.push(`${label}: not accepted: ${notAccepted}`);
	const expected = expectedRuns(sent.answers);
	const settled = await settle(server, workflowId, before + expected, 10 * 60_000);
	const doneMs = Date.now() - started;
	const peakRss = rss.stop();
	if (!settled.settled) problems.push(`${label}: executions not finished after 10 min (${JSON.stringify(settled)})`);
	await new Promise((resolve) => setTimeout(resolve, 3_000));
	const after = await executionCounts(server, workflowId);
	const executions = total(after) - before;
	if (after.failed > 0) problems.push(`${label}: ${after.failed} failed executions so far`);
	const ok = startedRuns(sent.answers);
	bench.log(
		`[5] ${label}: ${ok}/${bodies.length} accepted as new in ${fmt(sent.ms)} ms (${fmt(perSecond(ok, sent.ms))}/s), ` +
			`${executions} executions, all finished after ${fmt(doneMs)} ms, n8n RSS ${mib(startRss)} MiB at the start, ${mib(peakRss)} MiB at the peak`,
	);
	return {
		sample: { ms: sent.ms, itemsPerSecond: perSecond(ok, sent.ms), settleMs: doneMs, executedPerSecond: settled.settled ? perSecond(ok, doneMs) : Number.NaN, peakRss, startRss },
		executions,
		answers: sent.answers,
		problems,
	};
}
