/**
 * (2) The Clinic node's Parallel Requests option at 20 ms latency: 1, 4, 8, 16 and its upper bound in
 * flight against the HTTP Request node's default; order, pairing and the single token
 * checked on every run. Then one run against the simulator's rate limit (429 with
 * Retry-After) to show it is waited out and every item still succeeds.
 */
import { MAX_PARALLEL_REQUESTS } from '../nodes/Clinic/actions/scheduler';
import { clinicId, consultationGetWorkflow, pairingKept } from './consultations';
import type { Bench, Goal, Sample, SectionResult } from './lib/bench';
import { importAll, medianOf, roundLabel } from './lib/bench';
import type { CredentialImport, WorkflowImport } from './lib/n8n';
import { outputItems, timedExecute } from './lib/n8n';
import { countTokens, fetchAccessToken } from './lib/sim';
import { fmt, mib, perSecond, ratio, runsList, table } from './lib/stats';
import { MEASURED, NO_OP_NODE, httpRequestNode, itemsThen } from './lib/workflows';

const LATENCY_MS = 20;
const PARALLEL = [1, 4, 8, 16, MAX_PARALLEL_REQUESTS];
/** The rate-limited run: every Nth request answers 429 with this Retry-After. */
const RATE_LIMIT = { every: 25, retryAfterSeconds: 1 };
const RATE_LIMITED_PARALLEL = 8;

export async function measureParallel(bench: Bench): Promise<SectionResult> {
	const { sim, options } = bench;
	const count = options.quick ? 200 : 1000;
	const rounds = options.runs + 1;
	sim.reset();
	const bearer = await fetchAccessToken(sim);

	const credentials: CredentialImport[] = [];
	const workflows: WorkflowImport[] = [];
	const clinic = new Map<string, string>(); // `${parallel}/${round}` -> workflow id
	for (const parallel of PARALLEL) {
		for (let round = 0; round < rounds; round++) {
			const { credential, workflow } = consultationGetWorkflow(sim, `bench 2: parallel ${parallel}, round ${round}`, count, parallel);
			credentials.push(credential);
			workflows.push(workflow);
			clinic.set(`${parallel}/${round}`, workflow.id!);
		}
	}
	const rateLimited = consultationGetWorkflow(sim, 'bench 2: rate limited', count, RATE_LIMITED_PARALLEL);
	credentials.push(rateLimited.credential);
	workflows.push(rateLimited.workflow);
	const http = itemsThen(
		'bench 2: HTTP Request default',
		count,
		httpRequestNode(`=${sim.apiBaseUrl}/consultations/{{ $json.id }}`, bearer),
	);
	workflows.push(http);
	const baseline = itemsThen('bench 2: baseline (No Operation)', count, NO_OP_NODE);
	workflows.push(baseline);
	bench.log(`[2] importing ${credentials.length} credentials and ${workflows.length} workflows`);
	await importAll(bench, credentials, workflows);

	sim.setLatency(LATENCY_MS);
	const samples = new Map<string, Sample[]>(); // 'p1'... or 'http'
	const pairingFailures: string[] = [];
	for (let round = 0; round < rounds; round++) {
		for (const key of [...PARALLEL.map((p) => `p${p}`), 'http', 'baseline']) {
			const workflowId = key === 'http' ? http.id! : key === 'baseline' ? baseline.id! : clinic.get(`${key.slice(1)}/${round}`)!;
			const { value: run, tokens } = await countTokens(sim, () => timedExecute(bench.ctx, workflowId, MEASURED));
			const items = outputItems(run.node);
			const idOf = key === 'http' ? (item: (typeof items)[number]) => (item.json.consultation as { id?: unknown })?.id : clinicId;
			if (!pairingKept(items, count, idOf)) pairingFailures.push(`${key} ${roundLabel(round, options.runs)}`);
			const sample: Sample = {
				ms: run.nodeMs,
				itemsPerSecond: perSecond(count, run.nodeMs),
				tokens,
				peakRss: run.peakRss,
				cpuMs: run.cpuMs,
			};
			bench.log(
				`[2] ${key} ${roundLabel(round, options.runs)}: ${fmt(sample.ms)} ms, ${fmt(sample.itemsPerSecond)} items/s, ` +
					`tokens ${tokens}, CPU ${fmt(sample.cpuMs)} ms`,
			);
			if (round > 0) samples.set(key, [...(samples.get(key) ?? []), sample]);
		}
	}

	// The rate-limited run: the log is cleared first so that its 429s can be counted.
	sim.clearLog();
	sim.setRateLimit(RATE_LIMIT);
	let limited: { ms: number; tokens: number; answered429: number; requests: number; itemsOk: boolean; error?: string };
	try {
		const { value: run, tokens } = await countTokens(sim, () => timedExecute(bench.ctx, rateLimited.workflow.id!, MEASURED));
		const log = sim.log;
		limited = {
			ms: run.nodeMs,
			tokens,
			answered429: log.filter((entry) => entry.status === 429).length,
			requests: log.length,
			itemsOk: pairingKept(outputItems(run.node), count, clinicId),
		};
	} catch (error) {
		limited = { ms: Number.NaN, tokens: Number.NaN, answered429: Number.NaN, requests: Number.NaN, itemsOk: false, error: (error as Error).message };
	} finally {
		sim.setRateLimit(null);
		sim.setLatency(0);
	}
	bench.log(`[2] rate limited: ${JSON.stringify(limited).slice(0, 300)}`);

	// ---- report
	const ips = (key: string) => medianOf(samples.get(key) ?? [], 'itemsPerSecond');
	const cpu = (key: string) => medianOf(samples.get(key) ?? [], 'cpuMs');
	const rows = [...PARALLEL.map((p) => `p${p}`), 'http'].map((key) => {
		const list = samples.get(key) ?? [];
		return [
			key === 'http' ? 'HTTP Request 4.2, default' : `Clinic node, Parallel Requests ${key.slice(1)}`,
			fmt(ips(key)),
			fmt(medianOf(list, 'ms')),
			ratio(ips(key), ips('p1')),
			ratio(ips(key), ips('http')),
			fmt((cpu(key) - cpu('baseline')) / count, 2),
			key === 'http' ? '0 (fixed header)' : runsList(list.map((s) => s.tokens ?? Number.NaN)),
			mib(medianOf(list, 'peakRss')),
			runsList(list.map((s) => s.itemsPerSecond)),
		];
	});
	const clinicTokens = PARALLEL.flatMap((p) => (samples.get(`p${p}`) ?? []).map((s) => s.tokens));
	const speedup8 = ips('p8') / ips('p1');
	const vsHttpMax = ips(`p${MAX_PARALLEL_REQUESTS}`) / ips('http');
	const unlimited8 = medianOf(samples.get(`p${RATE_LIMITED_PARALLEL}`) ?? [], 'ms');
	const goals: Goal[] = [
		{
			text: `(2) Parallel Requests 8 >= 5x sequential items/s at ${LATENCY_MS} ms latency`,
			met: Number.isFinite(speedup8) ? speedup8 >= 5 : undefined,
			detail: `${fmt(ips('p8'))} vs ${fmt(ips('p1'))} items/s = ${fmt(speedup8, 2)}x`,
		},
		{
			text: `(2) Parallel Requests ${MAX_PARALLEL_REQUESTS} (upper bound) >= HTTP Request node default at ${LATENCY_MS} ms latency`,
			met: Number.isFinite(vsHttpMax) ? vsHttpMax >= 1 : undefined,
			detail: `${fmt(ips(`p${MAX_PARALLEL_REQUESTS}`))} vs ${fmt(ips('http'))} items/s = ${fmt(vsHttpMax, 2)}x`,
		},
		{
			text: '(2) order and pairing kept, one token per run, at every parallelism',
			met: pairingFailures.length === 0 && clinicTokens.length > 0 && clinicTokens.every((t) => t === 1),
			detail: `${pairingFailures.length === 0 ? 'order and pairing kept in all runs' : `broken: ${pairingFailures.join(', ')}`}; tokens per run ${clinicTokens.join(', ')}`,
		},
		{
			text: '(2) 429 + Retry-After respected: every item succeeds',
			met: limited.error ? false : limited.itemsOk && limited.answered429 > 0 && limited.tokens === 1,
			detail: limited.error
				? `run failed: ${limited.error.split('\n')[0]}`
				: `${limited.answered429} answers 429 (Retry-After ${RATE_LIMIT.retryAfterSeconds} s), all ${count} items in order, ${limited.tokens} token request(s)`,
		},
	];

	const markdown = [
		`${count} items -> Consultation Get at ${LATENCY_MS} ms simulated latency per request; ` +
			`medians of ${options.runs} runs after a warm-up run, each Clinic run with a fresh credential. ` +
			'Order and pairing: the output ids equal the input ids item by item and each output is paired to its input. ' +
			'n8n CPU ms per item: CPU time of `n8n execute` minus that of the same workflow with No Operation instead of the request, per item (see section 1).',
		'',
		table(
			['Variant', 'items/s', 'node ms', 'vs Parallel 1', 'vs HTTP default', 'n8n CPU ms per item', 'token requests per run', 'peak RSS MiB', 'items/s per run'],
			rows,
		),
		'',
		`Rate limit: every ${RATE_LIMIT.every}th request answered 429 with \`Retry-After: ${RATE_LIMIT.retryAfterSeconds}\`, ` +
			`Clinic node with Parallel Requests ${RATE_LIMITED_PARALLEL}, ${LATENCY_MS} ms latency, one run:`,
		'',
		table(
			['429 answers', 'requests seen', 'node ms', 'same without the limit (median)', 'extra ms', 'at least (429s x Retry-After / parallel)', 'items ok, in order', 'token requests'],
			[
				[
					fmt(limited.answered429),
					fmt(limited.requests),
					fmt(limited.ms),
					fmt(unlimited8),
					fmt(limited.ms - unlimited8),
					fmt((limited.answered429 * RATE_LIMIT.retryAfterSeconds * 1000) / RATE_LIMITED_PARALLEL),
					limited.itemsOk ? 'yes' : `no${limited.error ? `: ${limited.error.split('\n')[0]}` : ''}`,
					fmt(limited.tokens),
				],
			],
		),
	].join('\n');
	return { title: '2. Parallel Requests', markdown, goals };
}
