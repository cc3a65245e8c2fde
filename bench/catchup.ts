/**
 * (7) Catch-up after downtime: n8n is stopped, 10,000 events happen, n8n starts again.
 * The Clinic Event Log Trigger against the workaround users build without it (Schedule
 * Trigger every minute -> Event Get Many, Return All -> Remove Duplicates on the event id,
 * "Remove Items Processed in Previous Executions"). Both in a running n8n, one after the
 * other in the same benchmark run, against the same log: a few events seen before the
 * downtime, then `count` new ones. Measured from the moment n8n is started until every new
 * event has reached the workflow's last node: wall time, GET /events requests, peak RSS
 * of the n8n process; every run checked for exactly the new events, each once.
 */
import { startN8n, type Execution } from '../test/e2e/harness';
import type { Bench, Goal, SectionResult } from './lib/bench';
import { importAll } from './lib/bench';
import type { WorkflowImport } from './lib/n8n';
import { newN8nId } from './lib/n8n';
import { RssSampler } from './lib/proc';
import { fmt, mib, table } from './lib/stats';
import { clinicCredential, clinicNode, NO_OP_NODE } from './lib/workflows';

const DONE = 'Done';
const BEFORE_DOWNTIME = 5;
const WORKAROUND_HISTORY_SIZE = 100_000;
const SERVER_ENV = { EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all' };

type Kind = 'trigger' | 'workaround';
const LABELS: Record<Kind, string> = {
	trigger: 'Clinic Event Log Trigger (Max Events Per Poll = all)',
	workaround: 'Schedule Trigger + Event Get Many (Return All) + Remove Duplicates',
};

function chain(name: string, nodes: Array<{ name: string; node: Record<string, unknown> }>): WorkflowImport {
	return {
		id: newN8nId(),
		name,
		nodes: nodes.map(({ name: nodeName, node }, index) => ({ id: newN8nId(), name: nodeName, position: [index * 220, 0], ...node })),
		connections: Object.fromEntries(
			nodes.slice(0, -1).map(({ name: from }, index) => [from, { main: [[{ node: nodes[index + 1].name, type: 'main', index: 0 }]] }]),
		),
		settings: { executionOrder: 'v1' },
	} as unknown as WorkflowImport;
}

function doneIds(executions: Execution[]): number[] {
	const ids: number[] = [];
	for (const execution of executions) {
		const runs = (execution.data?.resultData?.runData?.[DONE] ?? []) as Array<{ data?: { main?: Array<Array<{ json: Record<string, unknown> }>> } }>;
		for (const run of runs) {
			for (const item of run.data?.main?.[0] ?? []) ids.push(Number(item.json.eventId ?? item.json.id));
		}
	}
	return ids;
}

export async function measureCatchUp(bench: Bench): Promise<SectionResult> {
	const { sim, ctx, options } = bench;
	const count = options.quick ? 1_000 : 10_000;
	const credential = clinicCredential(sim, 'bench 7');
	const event = { topicSuffix: 'patient', name: 'patient-updated' };
	const workflows: Record<Kind, WorkflowImport> = {
		trigger: chain('bench 7: Event Log Trigger', [
			{
				name: 'Event Log',
				node: {
					type: 'n8n-nodes-clinic.clinicEventLogTrigger',
					typeVersion: 1,
					parameters: {
						pollTimes: { item: [{ mode: 'everyMinute' }] },
						authentication: 'clinicApi',
						events: [`${event.topicSuffix}:${event.name}`],
						options: { maxEventsPerPoll: count },
					},
					credentials: { clinicApi: { id: credential.id, name: credential.name } },
				},
			},
			{ name: DONE, node: NO_OP_NODE as unknown as Record<string, unknown> },
		]),
		workaround: chain('bench 7: Schedule + Get Many + Remove Duplicates', [
			{
				name: 'Every Minute',
				node: {
					type: 'n8n-nodes-base.scheduleTrigger',
					typeVersion: 1.2,
					parameters: { rule: { interval: [{ field: 'minutes', minutesInterval: 1 }] } },
				},
			},
			{
				name: 'Get Events',
				node: clinicNode(credential, {
					resource: 'event',
					operation: 'getAll',
					returnAll: true,
					pageSize: 100,
					filters: { topic: event.topicSuffix, name: event.name },
				}) as unknown as Record<string, unknown>,
			},
			{
				name: 'New Only',
				node: {
					type: 'n8n-nodes-base.removeDuplicates',
					typeVersion: 2,
					// Its default History Size (10,000) refuses any run of more items, so a user must raise it for this backlog.
					parameters: {
						operation: 'removeItemsSeenInPreviousExecutions',
						dedupeValue: '={{ $json.id }}',
						options: { historySize: WORKAROUND_HISTORY_SIZE },
					},
				},
			},
			{ name: DONE, node: NO_OP_NODE as unknown as Record<string, unknown> },
		]),
	};
	await importAll(bench, [credential], Object.values(workflows));

	const results: Partial<Record<Kind, { ms: number; startupMs: number; requests: number; peakRss?: number; executions: number; ok: boolean; detail: string }>> = {};
	for (const kind of ['trigger', 'workaround'] as const) {
		const id = workflows[kind].id!;
		sim.reset();
		sim.seedEvents(BEFORE_DOWNTIME, event.topicSuffix, event.name);
		bench.log(`[7] ${kind}: n8n up, workflow active, ${BEFORE_DOWNTIME} events seen`);
		let server = await startN8n(ctx, { env: SERVER_ENV });
		try {
			await server.activateWorkflow(id);
			if (ctx.asyncPublication) await server.waitForPublication(id);
			if (kind === 'workaround') {
				// Its first scheduled run records the events seen before the downtime.
				await server.waitForExecutions(id, 1, { timeoutMs: 150_000 });
			}
		} finally {
			await server.stop();
		}
		sim.seedEvents(count, event.topicSuffix, event.name);
		const wanted = sim.events().slice(BEFORE_DOWNTIME).map((e) => e.id);
		sim.clearLog();
		bench.log(`[7] ${kind}: ${count} events while n8n was down; starting n8n`);
		const started = Date.now();
		server = await startN8n(ctx, { env: SERVER_ENV });
		const rss = new RssSampler(server.pid!);
		try {
			const seenBefore = new Set(kind === 'workaround' ? (await server.listExecutions(id, { includeData: false })).map((e) => String(e.id)) : []);
			let ids: number[] = [];
			let executions: Execution[] = [];
			let countedFinished = -1;
			const deadline = Date.now() + 15 * 60_000;
			while (Date.now() < deadline) {
				await new Promise((resolve) => setTimeout(resolve, 1000));
				if (!server.running) throw new Error(`n8n exited while catching up:\n${server.logTail(40)}`);
				try {
					// Without their data while waiting: fetching 10,000 items every second would load n8n.
					const finished = (await server.listExecutions(id, { includeData: false })).filter(
						(e) => !seenBefore.has(String(e.id)) && !['running', 'new', 'waiting'].includes(e.status),
					);
					if (finished.length > countedFinished) {
						executions = (await server.listExecutions(id)).filter(
							(e) => !seenBefore.has(String(e.id)) && !['running', 'new', 'waiting'].includes(e.status),
						);
						countedFinished = finished.length;
						ids = doneIds(executions);
						if (ids.length >= wanted.length) break;
					}
				} catch (error) {
					// A busy n8n may not answer the API in time: ask again.
					bench.log(`[7] ${kind}: n8n did not answer (${(error as Error).message.split('\n')[0]}); asking again`);
				}
			}
			// Until the last execution that carried new events stopped (n8n's own clock, same machine).
			const carrying = executions.filter((e) => doneIds([e]).length > 0 && e.stoppedAt);
			const lastStop = Math.max(...carrying.map((e) => Date.parse(e.stoppedAt!)));
			const ms = Number.isFinite(lastStop) ? lastStop - started : Date.now() - started;
			const peakRss = rss.stop();
			const sorted = [...ids].sort((a, b) => a - b);
			const ok = sorted.length === wanted.length && sorted.every((value, index) => value === wanted[index]);
			const requests = sim.log.filter((entry) => entry.path === '/events').length;
			results[kind] = {
				ms,
				startupMs: server.startupMs,
				requests,
				peakRss,
				executions: executions.length,
				ok,
				detail: ok ? '' : `got ${ids.length} ids (${new Set(ids).size} distinct) for ${wanted.length} new events`,
			};
			bench.log(`[7] ${kind}: ${ids.length} events in ${fmt(ms)} ms, ${requests} requests, RSS ${mib(peakRss)} MiB${ok ? '' : ' WRONG'}`);
			await server.deactivateWorkflow(id);
		} finally {
			rss.stop();
			await server.stop();
		}
	}

	const rows = (['trigger', 'workaround'] as const).map((kind) => {
		const r = results[kind];
		return [
			LABELS[kind],
			r ? fmt(r.ms) : '-',
			r ? fmt(r.startupMs) : '-',
			r ? String(r.requests) : '-',
			r ? mib(r.peakRss) : '-',
			r ? String(r.executions) : '-',
			r ? (r.ok ? `each of the ${count} once` : `WRONG: ${r.detail}`) : '-',
		];
	});
	const trigger = results.trigger;
	const workaround = results.workaround;
	const goals: Goal[] = [
		{
			text: `(7) Catch-up of ${count} events after downtime: every event once, no more time, requests or memory than the workaround`,
			met:
				trigger && workaround
					? trigger.ok && trigger.ms <= workaround.ms && trigger.requests <= workaround.requests && (trigger.peakRss ?? 0) <= (workaround.peakRss ?? Infinity)
					: undefined,
			detail: trigger && workaround
				? `${fmt(trigger.ms)} vs ${fmt(workaround.ms)} ms, ${trigger.requests} vs ${workaround.requests} requests, ` +
					`${mib(trigger.peakRss)} vs ${mib(workaround.peakRss)} MiB peak RSS`
				: 'not measured',
		},
	];
	const markdown = [
		`n8n running with one active workflow; ${BEFORE_DOWNTIME} events seen before n8n stops; ${count} events of the same ` +
			'kind (`patient-updated`) emitted while it is down; then n8n starts. "ms" runs from starting n8n to the moment every ' +
			'new event has reached the last node (No Operation) of a finished execution; "startup ms" is the part until n8n\'s ' +
			'editor answered. Requests: `GET /events` calls seen by the simulator after the restart. Peak RSS: the `n8n start` ' +
			'process, sampled. One run per variant (each takes minutes).',
		'',
		table(['Variant', 'ms', 'startup ms', 'GET /events', 'peak RSS MiB', 'executions', 'check'], rows),
		'',
		`Remove Duplicates' *History Size* is set to ${WORKAROUND_HISTORY_SIZE}: with its default of 10,000 the node refuses ` +
			'any run with more items ("The number of items to be processed exceeds the maximum history size"), and since ' +
			'Get Many returns the whole log every time, the workaround built with defaults fails every minute once the log ' +
			'holds more than 10,000 matching events.',
		'',
		'The Event Log Trigger catches up in the poll n8n runs when it activates the workflow at start-up, reading only the ' +
			'new part of the log. The workaround waits for the next full minute, reads the whole log every minute and ' +
			'compares each event with n8n\'s deduplication history; it also re-reads the whole log on every later run.',
	].join('\n');
	return { title: '7. Catch-up after downtime: Event Log Trigger vs Schedule + Get Many + Remove Duplicates', markdown, goals };
}
