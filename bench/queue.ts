/**
 * (9) n8n's queue mode: 1,000 webhook-started executions of Webhook -> Clinic Consultation
 * Get against the same workflow with n8n's HTTP Request node (GET with a fixed bearer
 * header), on one cluster as users run it (test/e2e/harness/queue.ts: PostgreSQL, Redis,
 * one main, 2 workers at n8n's default concurrency of 10, 2 webhook processors behind a
 * round-robin balancer). The benchmark process POSTs the calls through the balancer, 20
 * in flight over keep-alive connections; the Webhook node answers on receipt, the workers
 * run the executions behind.
 *
 * Executions/s runs from the first request sent to the last execution's stoppedAt (n8n's
 * clock, same machine). Every run has workflows of its own, and each Clinic run its own
 * credential imported before the cluster started (no stored token). Token requests are
 * the simulator's count during each run: the warm-up shows what 2 worker processes need
 * from no sign-in; later runs show whether a worker's sign-in for the same account is
 * reused by a credential it has not used yet.
 * Every run is checked: each call answered 200, each execution succeeded, one
 * `GET /consultations/:id` per execution reached the simulator.
 */
import { randomUUID } from 'node:crypto';

import {
	createN8nContext,
	enableQueueMode,
	importCredentials,
	importWorkflows,
	packRepository,
	startQueueCluster,
	type QueueCluster,
} from '../test/e2e/harness';
import type { Bench, Goal, Sample, SectionResult } from './lib/bench';
import { medianOf, roundLabel } from './lib/bench';
import { settle } from './lib/executions';
import type { CredentialImport, WorkflowImport } from './lib/n8n';
import { newN8nId } from './lib/n8n';
import { sendAll } from './lib/sender';
import { fetchAccessToken } from './lib/sim';
import { fmt, perSecond, ratio, runsList, table } from './lib/stats';
import { MEASURED, clinicCredential, clinicNode, httpRequestNode, type NodeSpec } from './lib/workflows';

const TITLE = '9. Queue mode: 1,000 webhook-started executions on 2 workers, Clinic node vs HTTP Request node';
const WORKERS = 2;
const WEBHOOK_PROCESSORS = 2;
/** n8n's own default of `n8n worker --concurrency`. */
const WORKER_CONCURRENCY = 10;
const IN_FLIGHT = 20;

type Kind = 'clinic' | 'http';
const KINDS: Kind[] = ['clinic', 'http'];
const LABELS: Record<Kind, string> = {
	clinic: 'Webhook -> Clinic node, Consultation Get (password credential)',
	http: 'Webhook -> HTTP Request node 4.2, GET with a fixed bearer header',
};

/** Webhook (POST, answers on receipt) -> `measured`. */
function webhookThen(name: string, path: string, measured: NodeSpec): WorkflowImport {
	return {
		id: newN8nId(),
		name,
		nodes: [
			{
				id: newN8nId(),
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: randomUUID(),
				parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
			},
			{ ...measured, id: newN8nId(), name: MEASURED, position: [220, 0] },
		],
		connections: { Webhook: { main: [[{ node: MEASURED, type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	} as unknown as WorkflowImport;
}

interface RoundWorkflow {
	id: string;
	path: string;
}

interface QueueSample extends Sample {
	/** Until every call was answered (the Webhook node answers on receipt). */
	answeredMs: number;
	perWorker0: number;
	perWorker1: number;
}

export async function measureQueue(bench: Bench): Promise<SectionResult> {
	const { sim, options } = bench;
	const count = options.quick ? 200 : 1000;
	// Each run is about a minute of a 6-process cluster: at most 3 measured runs, and a
	// warm-up of a tenth of the calls.
	const measuredRounds = Math.min(options.runs, 3);
	const rounds = measuredRounds + 1;
	const callsIn = (round: number) => (round === 0 ? Math.ceil(count / 10) : count);
	sim.reset();
	const bearer = await fetchAccessToken(sim);

	const credentials: CredentialImport[] = [];
	const workflows: WorkflowImport[] = [];
	const planned = new Map<string, RoundWorkflow>(); // `${kind}/${round}`
	for (let round = 0; round < rounds; round++) {
		for (const kind of KINDS) {
			const path = `bench-queue-${kind}-${round}`;
			const label = `bench 9: ${kind}, round ${round}`;
			let measured: NodeSpec;
			if (kind === 'clinic') {
				const credential = clinicCredential(sim, label);
				credentials.push(credential);
				measured = clinicNode(credential, { resource: 'consultation', operation: 'get', consultationId: '={{ $json.body.id }}' });
			} else {
				measured = httpRequestNode(`=${sim.apiBaseUrl}/consultations/{{ $json.body.id }}`, bearer);
			}
			const workflow = webhookThen(label, path, measured);
			workflows.push(workflow);
			planned.set(`${kind}/${round}`, { id: workflow.id!, path });
		}
	}

	// A queue-mode context of its own (its environment is set before its first n8n command),
	// with the package the benchmark already built and packed.
	const ctx = await createN8nContext({ version: options.version, label: 'bench-queue', env: options.env });
	let cluster: QueueCluster | undefined;
	const samples: Record<Kind, QueueSample[]> = { clinic: [], http: [] };
	const tokensPerRun: Record<Kind, number[]> = { clinic: [], http: [] };
	const warmUpTokens: Partial<Record<Kind, number>> = {};
	const problems: string[] = [];
	try {
		ctx.installPackage(packRepository(ctx.rootDir));
		const { services } = await enableQueueMode(ctx);
		bench.log(
			`[9] PostgreSQL ${services.origin.postgres}, Redis ${services.origin.redis}; importing ${credentials.length} credentials and ${workflows.length} workflows`,
		);
		await importCredentials(ctx, credentials);
		await importWorkflows(ctx, workflows);
		cluster = await startQueueCluster(ctx, { workers: WORKERS, webhookProcessors: WEBHOOK_PROCESSORS, concurrency: WORKER_CONCURRENCY });
		for (const { id } of planned.values()) {
			await cluster.main.activateWorkflow(id);
			if (ctx.asyncPublication) await cluster.main.waitForPublication(id);
		}
		bench.log(`[9] cluster up: ${cluster.pids().map((p) => `${p.kind}${p.kind === 'main' ? '' : ` ${p.index}`}`).join(', ')}`);

		for (let round = 0; round < rounds; round++) {
			// Alternating order, so that neither variant always runs on a cluster warmed by the other.
			const order = round % 2 === 0 ? KINDS : [...KINDS].reverse();
			for (const kind of order) {
				const { id, path } = planned.get(`${kind}/${round}`)!;
				const calls = callsIn(round);
				const what = `${LABELS[kind]}, ${roundLabel(round, measuredRounds)}`;
				sim.clearLog();
				const perWorkerBefore = cluster.executionsPerWorker();
				const bodies = Array.from({ length: calls }, (_, i) => Buffer.from(JSON.stringify({ id: (i % 3) + 1, call: i })));
				const started = Date.now();
				const sent = await sendAll(cluster.webhookUrl(path), bodies, () => ({ 'content-type': 'application/json' }), IN_FLIGHT);
				const answered = sent.answers.filter((a) => a.status === 200).length;
				const counts = await settle(cluster.main, id, answered, 10 * 60_000);
				const executions = (await cluster.main.listExecutions(id, { includeData: false })).filter((e) => e.stoppedAt);
				const lastStop = Math.max(...executions.map((e) => Date.parse(e.stoppedAt!)));
				const ms = lastStop - started;
				const tokens = sim.tokenRequests();
				const gets = sim.log.filter((e) => e.method === 'GET' && /\/consultations\/\d+$/.test(e.path) && e.status === 200).length;
				const perWorker = cluster.executionsPerWorker().map((n, i) => n - perWorkerBefore[i]);

				const wrong = [
					answered !== calls && `${calls - answered} of ${calls} calls not answered 200 (e.g. ${JSON.stringify(sent.answers.find((a) => a.status !== 200))})`,
					!counts.settled && `executions not finished after 10 min (${JSON.stringify(counts)})`,
					counts.success !== calls && `${counts.success} of ${calls} executions succeeded, ${counts.failed} failed`,
					gets !== calls && `${gets} GET /consultations/:id answered 200 for ${calls} executions`,
				].filter((w): w is string => typeof w === 'string');
				if (wrong.length > 0) problems.push(`${what}: ${wrong.join('; ')}`);
				bench.log(
					`[9] ${what}: ${counts.success}/${calls} executions in ${fmt(ms)} ms (${fmt(perSecond(calls, ms), 1)}/s), ` +
						`answered in ${fmt(sent.ms)} ms, per worker ${perWorker.join(' + ')}, token requests ${tokens}${wrong.length ? ' WRONG' : ''}`,
				);
				if (round === 0) {
					warmUpTokens[kind] = tokens;
					continue;
				}
				samples[kind].push({
					ms,
					itemsPerSecond: perSecond(calls, ms),
					tokens,
					answeredMs: sent.ms,
					perWorker0: perWorker[0],
					perWorker1: perWorker[1],
				});
				tokensPerRun[kind].push(tokens);
			}
		}
	} finally {
		await cluster?.stop();
		await ctx.dispose();
	}

	const rate = (kind: Kind) => medianOf(samples[kind], 'itemsPerSecond');
	const rows = KINDS.map((kind) => [
		LABELS[kind],
		fmt(rate(kind), 1),
		runsList(samples[kind].map((s) => s.itemsPerSecond), 1),
		fmt(medianOf(samples[kind], 'ms')),
		fmt(medianOf(samples[kind], 'answeredMs')),
		samples[kind].map((s) => `${s.perWorker0} + ${s.perWorker1}`).join(', '),
		String(warmUpTokens[kind] ?? '-'),
		kind === 'clinic' ? tokensPerRun.clinic.join(', ') : `${tokensPerRun.http.join(', ')} (its token was fetched once before, pasted into the header)`,
	]);
	const clinicTokens = [warmUpTokens.clinic ?? Number.NaN, ...tokensPerRun.clinic];
	const clinicTokensOk = tokensPerRun.clinic.length > 0 && clinicTokens.every((t) => t <= WORKERS);
	const r = rate('clinic') / rate('http');
	const goals: Goal[] = [
		{
			text: `(9) Queue mode, ${count} webhook-started executions on ${WORKERS} workers: every execution succeeds, at most one token request per worker per run`,
			met: samples.clinic.length > 0 ? problems.length === 0 && clinicTokensOk : undefined,
			detail: `${problems.length === 0 ? 'all calls answered, all executions succeeded' : `problems: ${problems.length}`}; Clinic token requests: warm-up ${warmUpTokens.clinic ?? '-'}, runs ${tokensPerRun.clinic.join(', ')}`,
		},
		{
			text: `(9) Queue mode: Clinic node workflow >= 0.9x the HTTP Request node workflow's executions/s`,
			met: Number.isFinite(r) ? r >= 0.9 : undefined,
			detail: `${fmt(rate('clinic'), 1)} vs ${fmt(rate('http'), 1)} executions/s = ${fmt(r, 2)}x`,
		},
	];
	const markdown = [
		`One queue-mode cluster (PostgreSQL, Redis, 1 main, ${WORKERS} workers at concurrency ${WORKER_CONCURRENCY}, ` +
			`${WEBHOOK_PROCESSORS} webhook processors behind a round-robin balancer), simulator at 0 ms latency. Per run ` +
			`${count} POSTs through the balancer, ${IN_FLIGHT} in flight, each starting Webhook (answers on receipt) -> the measured ` +
			'node with `{{ $json.body.id }}` (ids 1-3). "executions/s": calls / time from the first call sent to the last ' +
			'execution\'s stoppedAt; "answered ms": until every call was answered. Each Clinic run uses its own credential, ' +
			`with no stored token. ${measuredRounds} measured runs per variant after a warm-up of ${Math.ceil(count / 10)} calls, ` +
			'alternating which variant goes first; medians.',
		'',
		table(
			['Workflow', 'executions/s', 'per run', 'ms', 'answered ms', 'executions per worker', 'token requests, warm-up', 'token requests per run'],
			rows,
		),
		'',
		`Clinic / HTTP Request: ${ratio(rate('clinic'), rate('http'))} of the executions/s.`,
		'',
		'Token requests: in the warm-up every worker starts with no sign-in, so the Clinic credential asks once per ' +
			'worker process at most. In the measured runs each Clinic workflow has a credential of its own that was never ' +
			'used, for the same account (API Base URL, username, password): a worker shares the sign-in it already has for it while it is valid ' +
			'(one sign-in per account and process, `credentials/ClinicAuth.ts` `joinPendingSignIn`), so a count of 0 there is that reuse.',
		'',
		problems.length === 0
			? `Checked in every run: each call answered 200, each execution succeeded, one \`GET /consultations/:id\` per execution reached the simulator.`
			: `**Problems:**\n\n${problems.map((p) => `- ${p}`).join('\n')}`,
	].join('\n');
	return { title: TITLE, markdown, goals };
}
