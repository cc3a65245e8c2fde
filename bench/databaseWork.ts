/**
 * (11) The database work of a burst of deliveries, the Clinic Trigger beside n8n's Webhook
 * node (and the Webhook node with Header Auth, which reads a credential per request), on one
 * freshly started `n8n start` with SQLite and n8n's own query log on (bench/lib/queryLog.ts).
 *
 * Per receiver, in turn: a warm-up of 2 distinct deliveries one after the other (n8n's first
 * look-ups, and the Clinic credential's first sign-in, happen there), 15 s idle, then the
 * burst of section 5 (each event delivered twice, every delivery at once; the Clinic
 * Trigger's events logged before any is sent, as after an outage). A window of the query
 * log spans each warm-up and each burst, from the first send until every execution it
 * started finished, plus 3 s. The executions are counted, and their stored data measured,
 * in the SQLite file from outside n8n (bench/lib/sqliteFile.ts), so the benchmark's own
 * questions are not in n8n's log. A window with nothing sent shows n8n's background work.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Bench, SectionResult } from './lib/bench';
import { importAll } from './lib/bench';
import { databaseWorkReport, type ReceiverWork, type Window } from './lib/databaseWorkReport';
import { accepted, markedDuplicate, notAcceptedSummary, startedRuns } from './lib/deliveryRuns';
import { executionCounts } from './lib/executions';
import { DB_LOGGING_ENV, countStatements, logOffset, parseStatements, readLogSlice } from './lib/queryLog';
import { addresses, deliveryLog, receiverSetup, type Receiver } from './lib/receivers';
import { sendAll, type Answer } from './lib/sender';
import { SqliteFile, executionsSince, lastExecutionId, staticDataBytes, storedExecutions } from './lib/sqliteFile';
import { clinicCredential } from './lib/workflows';
import { LOGGED_BEFORE, SERVER_ENV } from './deliveries';
import { startN8n, type N8nServer } from '../test/e2e/harness';

const RECEIVERS: Receiver[] = ['trigger', 'webhookHeaderAuth', 'webhook'];
const BURST_EVENTS = 300;
const WARM_UP_DELIVERIES = 2;
const IDLE_MS = 15_000;
const NOTHING_SENT_MS = 20_000;
const AFTER_SETTLED_MS = 3_000;
const SETTLE_TIMEOUT_MS = 10 * 60_000;

const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `expected` executions of the workflow after `afterId` finished and none is pending. */
async function settleInFile(db: SqliteFile, workflowId: string, afterId: number, expected: number): Promise<boolean> {
	const deadline = Date.now() + SETTLE_TIMEOUT_MS;
	for (;;) {
		const seen = await executionsSince(db, workflowId, afterId);
		if (seen.finished >= expected && seen.pending === 0) return true;
		if (Date.now() > deadline) return false;
		await sleep(1000);
	}
}

export async function measureDatabaseWork(bench: Bench): Promise<SectionResult> {
	const { sim, options, ctx } = bench;
	const burstEvents = options.quick ? 50 : BURST_EVENTS;
	const { logEvent, bodies } = deliveryLog(sim, LOGGED_BEFORE);

	const credential = clinicCredential(sim, 'bench 11');
	const setup = receiverSetup(credential, 1.1);
	await importAll(bench, [credential, setup.headerAuth], RECEIVERS.map((r) => setup.workflows[r]));
	const db = SqliteFile.of(ctx);
	const rawDir = join(tmpdir(), `clinic-bench-db-work-${Date.now()}`);
	mkdirSync(rawDir, { recursive: true });

	bench.log('[11] starting n8n with its query log on');
	const server: N8nServer = await startN8n(ctx, { env: { ...SERVER_ENV, ...DB_LOGGING_ENV } });
	const work: Partial<Record<Receiver, ReceiverWork>> = {};
	let nothingSent: Window | undefined;
	const problems: string[] = [];
	try {
		// n8n 1.x says it is ready before its database is ("Database is not ready!", 503).
		const until = Date.now() + 60_000;
		while (!(await executionCounts(server, setup.workflows.trigger.id!).then(() => true, () => false)) && Date.now() < until) await sleep(500);
		for (const receiver of RECEIVERS) await server.activateWorkflow(setup.workflows[receiver].id!);
		const address = addresses(setup, server, sim);

		/** One window of the query log: `act` runs inside it; the statements are kept in rawDir. */
		const windowed = async (name: string, act: () => Promise<void>): Promise<Window> => {
			const from = logOffset(server.logFile);
			const started = Date.now();
			await act();
			const ms = Date.now() - started;
			const statements = parseStatements(readLogSlice(server.logFile, from, logOffset(server.logFile)));
			writeFileSync(join(rawDir, `${name}.sql.txt`), statements.map((s) => `${s.failed ? 'FAILED ' : ''}${s.sql.replace(/\s+/g, ' ')}`).join('\n') + '\n');
			return { ms, counts: countStatements(statements) };
		};

		await sleep(IDLE_MS);
		bench.log(`[11] ${NOTHING_SENT_MS / 1000} s with nothing sent`);
		nothingSent = await windowed('nothing-sent', async () => await sleep(NOTHING_SENT_MS));

		for (const receiver of RECEIVERS) {
			const workflowId = setup.workflows[receiver].id!;
			const target = address[receiver];
			/** Sends `sent` (at most `concurrency` at once) and waits until every execution it started finished. */
			const deliver = async (label: string, sent: Buffer[], concurrency: number, loggedFirst?: Buffer[]): Promise<{ answers: Answer[]; executions: number; afterId: number; settledMs: number }> => {
				// The service logs each event before delivering it: for the Clinic Trigger's duplicate check.
				if (receiver === 'trigger') loggedFirst?.forEach(logEvent);
				const beforeSend = receiver === 'trigger' && !loggedFirst ? (i: number) => logEvent(sent[i]) : undefined;
				const afterId = await lastExecutionId(db);
				const started = Date.now();
				const { answers } = await sendAll(target.url, sent, target.headers, concurrency, beforeSend);
				const expected = startedRuns(answers, receiver === 'trigger');
				if (!(await settleInFile(db, workflowId, afterId, expected))) problems.push(`${receiver} ${label}: executions not finished after ${SETTLE_TIMEOUT_MS / 60_000} min`);
				const settledMs = Date.now() - started;
				await sleep(AFTER_SETTLED_MS);
				const seen = await executionsSince(db, workflowId, afterId);
				const notAccepted = notAcceptedSummary(answers);
				if (notAccepted) problems.push(`${receiver} ${label}: not accepted: ${notAccepted}`);
				return { answers, executions: seen.finished + seen.pending, afterId, settledMs };
			};

			bench.log(`[11] ${receiver}: warm-up`);
			const warmUpBodies = bodies(`warm-up-${receiver}`, WARM_UP_DELIVERIES);
			const warmUp = await windowed(`${receiver}-warm-up`, async () => void (await deliver('warm-up', warmUpBodies, 1)));
			await sleep(IDLE_MS);

			bench.log(`[11] ${receiver}: burst of ${burstEvents} events, each twice`);
			const events = bodies(`burst-${receiver}`, burstEvents);
			const twice = events.flatMap((body) => [body, body]);
			let result: Awaited<ReturnType<typeof deliver>> | undefined;
			const burst = await windowed(`${receiver}-burst`, async () => void (result = await deliver('burst', twice, twice.length, events)));
			const stored = await storedExecutions(db, workflowId, result!.afterId);
			work[receiver] = {
				warmUp,
				burst,
				sent: twice.length,
				accepted: result!.answers.filter(accepted).length,
				markedDuplicate: result!.answers.filter(markedDuplicate).length,
				executions: result!.executions,
				settledMs: result!.settledMs,
				stored,
				staticDataBytes: await staticDataBytes(db, workflowId),
			};
			const failed = stored.filter((e) => e.status !== 'success').length;
			if (failed) problems.push(`${receiver} burst: ${failed} executions did not succeed`);
			bench.log(
				`[11] ${receiver}: ${twice.length} sent, ${result!.executions} executions, ${burst.counts.total} statements ` +
					`(${(burst.counts.total / twice.length).toFixed(2)} per delivery), all finished after ${result!.settledMs} ms`,
			);
		}
		for (const receiver of RECEIVERS) await server.deactivateWorkflow(setup.workflows[receiver].id!);
	} finally {
		await server.stop();
	}
	bench.log(`[11] the statements of each window: ${rawDir}`);
	return databaseWorkReport({ version: options.version, burstEvents, warmUpDeliveries: WARM_UP_DELIVERIES, nothingSent: nothingSent!, work, problems });
}
