/**
 * (8) "Parallel Requests: Automatic", the Clinic node's default, against n8n's HTTP Request
 * node at its defaults: 1,000 x Consultation Get at 0, 20 and 100 ms latency, then against
 * a simulator that allows 50 requests per second (429 with Retry-After past it).
 */
import { MAX_PARALLEL_REQUESTS } from '../nodes/Clinic/actions/scheduler';
import { clinicId, consultationGetWorkflow, pairingKept } from './consultations';
import type { Bench, Goal, Sample, SectionResult } from './lib/bench';
import { importAll, medianOf, roundLabel } from './lib/bench';
import type { CredentialImport, RunItem, WorkflowImport } from './lib/n8n';
import { outputItems, timedExecute } from './lib/n8n';
import { countTokens, fetchAccessToken } from './lib/sim';
import { fmt, mib, perSecond, ratio, runsList, table } from './lib/stats';
import { MEASURED, httpRequestNode, itemsThen } from './lib/workflows';

const LATENCIES_MS = [0, 20, 100];
/** A small batch on a slow service: the start of a run, where the slow start costs most. */
const SMALL_BATCH = { items: 300, latencyMs: 100 };
const RATE_LIMIT = { requestsPerSecond: 50 };

const httpId = (item: RunItem): unknown => (item.json.consultation as { id?: unknown } | undefined)?.id;

interface LimitedRun {
	label: string;
	ms: number;
	answered429: number;
	requests: number;
	itemsOk: number;
	itemsFailed: number;
	inOrder: boolean;
	tokens: number;
	error?: string;
}

export async function measureAdaptive(bench: Bench): Promise<SectionResult> {
	const { sim, options } = bench;
	const count = options.quick ? 200 : 1000;
	const rounds = options.runs + 1;
	sim.reset();
	const bearer = await fetchAccessToken(sim);
	const url = `=${sim.apiBaseUrl}/consultations/{{ $json.id }}`;

	const credentials: CredentialImport[] = [];
	const workflows: WorkflowImport[] = [];
	const clinic = new Map<string, string>(); // `${latency}/${round}` -> workflow id
	for (const latency of LATENCIES_MS) {
		for (let round = 0; round < rounds; round++) {
			const { credential, workflow } = consultationGetWorkflow(sim, `bench 8: defaults, ${latency} ms, round ${round}`, count, undefined);
			credentials.push(credential);
			workflows.push(workflow);
			clinic.set(`${latency}/${round}`, workflow.id!);
		}
	}
	const smallClinic: string[] = [];
	for (let round = 0; round < rounds; round++) {
		const { credential, workflow } = consultationGetWorkflow(sim, `bench 8: small batch, round ${round}`, SMALL_BATCH.items, undefined);
		credentials.push(credential);
		workflows.push(workflow);
		smallClinic.push(workflow.id!);
	}
	const smallHttp = itemsThen('bench 8: HTTP Request default, small batch', SMALL_BATCH.items, httpRequestNode(url, bearer));
	workflows.push(smallHttp);
	const limitedClinic = consultationGetWorkflow(sim, 'bench 8: defaults, rate limited', count, undefined);
	credentials.push(limitedClinic.credential);
	workflows.push(limitedClinic.workflow);
	const http = itemsThen('bench 8: HTTP Request default', count, httpRequestNode(url, bearer));
	// The same node with Settings > On Error: Continue, to count the items it fails.
	const httpContinue = itemsThen('bench 8: HTTP Request, On Error: Continue', count, {
		...httpRequestNode(url, bearer),
		onError: 'continueRegularOutput',
	});
	workflows.push(http, httpContinue);
	bench.log(`[8] importing ${credentials.length} credentials and ${workflows.length} workflows`);
	await importAll(bench, credentials, workflows);

	const samples = new Map<string, Sample[]>(); // `${kind}/${latency}`
	const pairingFailures: string[] = [];
	const peaks = new Map<number, number[]>(); // latency -> in-flight peaks of the Clinic runs
	for (const latency of LATENCIES_MS) {
		sim.setLatency(latency);
		for (let round = 0; round < rounds; round++) {
			for (const kind of ['clinic', 'http'] as const) {
				const workflowId = kind === 'clinic' ? clinic.get(`${latency}/${round}`)! : http.id!;
				sim.clearLog();
				const { value: run, tokens } = await countTokens(sim, () => timedExecute(bench.ctx, workflowId, MEASURED));
				const peak = sim.inFlight().peak;
				if (!pairingKept(outputItems(run.node), count, kind === 'clinic' ? clinicId : httpId)) {
					pairingFailures.push(`${kind} ${latency} ms ${roundLabel(round, options.runs)}`);
				}
				const sample: Sample = { ms: run.nodeMs, itemsPerSecond: perSecond(count, run.nodeMs), tokens, peakRss: run.peakRss, cpuMs: run.cpuMs, peak };
				bench.log(
					`[8] ${latency} ms ${kind} ${roundLabel(round, options.runs)}: ${fmt(sample.ms)} ms, ${fmt(sample.itemsPerSecond)} items/s, ` +
						`tokens ${tokens}, in flight at most ${peak}`,
				);
				if (round === 0) continue;
				samples.set(`${kind}/${latency}`, [...(samples.get(`${kind}/${latency}`) ?? []), sample]);
				if (kind === 'clinic') peaks.set(latency, [...(peaks.get(latency) ?? []), peak]);
			}
		}
	}
	// The small batch: each run a fresh `n8n execute` (as every run here), 300 items.
	sim.setLatency(SMALL_BATCH.latencyMs);
	const small = new Map<string, Sample[]>();
	for (let round = 0; round < rounds; round++) {
		for (const kind of ['clinic', 'http'] as const) {
			sim.clearLog();
			const workflowId = kind === 'clinic' ? smallClinic[round] : smallHttp.id!;
			const { value: run, tokens } = await countTokens(sim, () => timedExecute(bench.ctx, workflowId, MEASURED));
			if (!pairingKept(outputItems(run.node), SMALL_BATCH.items, kind === 'clinic' ? clinicId : httpId)) {
				pairingFailures.push(`${kind} small batch ${roundLabel(round, options.runs)}`);
			}
			const sample: Sample = { ms: run.nodeMs, itemsPerSecond: perSecond(SMALL_BATCH.items, run.nodeMs), tokens, peakRss: run.peakRss, peak: sim.inFlight().peak };
			bench.log(`[8] small batch ${kind} ${roundLabel(round, options.runs)}: ${fmt(sample.ms)} ms, ${fmt(sample.itemsPerSecond)} items/s`);
			if (round > 0) small.set(kind, [...(small.get(kind) ?? []), sample]);
		}
	}
	sim.setLatency(0);

	// Rate limited: one run each; the log is cleared first so that its 429s can be counted.
	const limitedRun = async (label: string, workflowId: string, idOf: (item: RunItem) => unknown): Promise<LimitedRun> => {
		sim.clearLog();
		sim.setRateLimit(RATE_LIMIT);
		try {
			const { value: run, tokens } = await countTokens(sim, () => timedExecute(bench.ctx, workflowId, MEASURED));
			const items = outputItems(run.node);
			const failed = items.filter((item) => item.json.error !== undefined).length;
			return {
				label,
				ms: run.nodeMs,
				answered429: sim.log.filter((entry) => entry.status === 429).length,
				requests: sim.log.length,
				itemsOk: items.length - failed,
				itemsFailed: failed,
				inOrder: failed === 0 && pairingKept(items, count, idOf),
				tokens,
			};
		} catch (error) {
			return {
				label,
				ms: Number.NaN,
				answered429: sim.log.filter((entry) => entry.status === 429).length,
				requests: sim.log.length,
				itemsOk: 0,
				itemsFailed: count,
				inOrder: false,
				tokens: Number.NaN,
				error: (error as Error).message.split('\n')[0].replace(/^workflow \w+: /, '').replace(/ \(log: .*\)$/, ''),
			};
		} finally {
			// Each run is its own n8n process: nothing the limiter learned carries over.
			sim.setRateLimit(null);
		}
	};
	const limited = [
		await limitedRun('Clinic node, defaults (Automatic)', limitedClinic.workflow.id!, clinicId),
		await limitedRun('HTTP Request 4.2, defaults', http.id!, httpId),
		await limitedRun('HTTP Request 4.2, defaults + On Error: Continue', httpContinue.id!, httpId),
	];
	for (const run of limited) bench.log(`[8] rate limited: ${JSON.stringify(run).slice(0, 300)}`);

	// ---- report
	const ips = (kind: string, latency: number) => medianOf(samples.get(`${kind}/${latency}`) ?? [], 'itemsPerSecond');
	const rows = LATENCIES_MS.flatMap((latency) =>
		(['clinic', 'http'] as const).map((kind) => {
			const list = samples.get(`${kind}/${latency}`) ?? [];
			return [
				kind === 'clinic' ? 'Clinic node, defaults (Parallel Requests: Automatic)' : 'HTTP Request 4.2, defaults',
				`${latency} ms`,
				fmt(ips(kind, latency)),
				fmt(medianOf(list, 'ms')),
				ratio(ips(kind, latency), ips('http', latency)),
				kind === 'clinic' ? runsList(peaks.get(latency) ?? []) : runsList(list.map((s) => s.peak ?? Number.NaN)),
				kind === 'clinic' ? runsList(list.map((s) => s.tokens ?? Number.NaN)) : '0 (fixed header)',
				mib(medianOf(list, 'peakRss')),
				runsList(list.map((s) => s.itemsPerSecond)),
			];
		}),
	);
	const smallIps = (kind: string) => medianOf(small.get(kind) ?? [], 'itemsPerSecond');
	const smallRows = (['clinic', 'http'] as const).map((kind) => {
		const list = small.get(kind) ?? [];
		return [
			kind === 'clinic' ? 'Clinic node, defaults' : 'HTTP Request 4.2, defaults',
			fmt(smallIps(kind)),
			fmt(medianOf(list, 'ms')),
			ratio(smallIps(kind), smallIps('http')),
			runsList(list.map((s) => s.peak ?? Number.NaN)),
			kind === 'clinic' ? runsList(list.map((s) => s.tokens ?? Number.NaN)) : '0 (fixed header)',
			runsList(list.map((s) => s.itemsPerSecond)),
		];
	});
	const clinicTokens = LATENCIES_MS.flatMap((latency) => (samples.get(`clinic/${latency}`) ?? []).map((s) => s.tokens));
	const [limitedOwn, limitedHttp, limitedHttpContinue] = limited;
	const goals: Goal[] = [
		...LATENCIES_MS.map((latency) => {
			const r = ips('clinic', latency) / ips('http', latency);
			return {
				text: `(8) Clinic node at its defaults >= HTTP Request node at its defaults, ${latency} ms latency`,
				met: Number.isFinite(r) ? r >= 1 : undefined,
				detail: `${fmt(ips('clinic', latency))} vs ${fmt(ips('http', latency))} items/s = ${fmt(r, 2)}x`,
			};
		}),
		{
			text: `(8) small batch (${SMALL_BATCH.items} items, fresh \`n8n execute\`, ${SMALL_BATCH.latencyMs} ms): Clinic node >= HTTP Request node`,
			met: Number.isFinite(smallIps('clinic') / smallIps('http')) ? smallIps('clinic') >= smallIps('http') : undefined,
			detail: `${fmt(smallIps('clinic'))} vs ${fmt(smallIps('http'))} items/s = ${fmt(smallIps('clinic') / smallIps('http'), 2)}x`,
		},
		{
			text: '(8) defaults: order and pairing kept, one token per run',
			met: pairingFailures.length === 0 && clinicTokens.length > 0 && clinicTokens.every((t) => t === 1),
			detail: `${pairingFailures.length === 0 ? 'order and pairing kept in all runs' : `broken: ${pairingFailures.join(', ')}`}; tokens per run ${clinicTokens.join(', ')}`,
		},
		{
			text: `(8) ${RATE_LIMIT.requestsPerSecond} requests/s limit: Clinic node finishes every item, with fewer 429 answers than the HTTP Request node`,
			met: !limitedOwn.error && limitedOwn.inOrder && limitedOwn.answered429 < Math.min(limitedHttp.answered429, limitedHttpContinue.answered429),
			detail:
				`Clinic: ${limitedOwn.error ? `failed: ${limitedOwn.error}` : `${limitedOwn.itemsOk}/${count} items, ${limitedOwn.answered429} x 429`}; ` +
				`HTTP Request: ${limitedHttp.answered429} x 429${limitedHttp.error ? ', the run failed' : ''}; ` +
				`with On Error: Continue ${limitedHttpContinue.answered429} x 429 and ${limitedHttpContinue.itemsFailed}/${count} items failed`,
		},
	];

	const markdown = [
		`${count} items -> GET /consultations/{id}: the Clinic node with no option set (Parallel Requests: Automatic, Maximum ${MAX_PARALLEL_REQUESTS}) ` +
			'against the HTTP Request node with no option set (fixed bearer header), ' +
			`medians of ${options.runs} runs after a warm-up run, each Clinic run with a fresh credential (its token request included). ` +
			'"In flight at most": the most requests the simulator was answering at once during the run. ' +
			'Order and pairing: output ids equal input ids item by item, each output paired to its input.',
		'',
		table(
			['Variant', 'Latency', 'items/s', 'node ms', 'vs HTTP default', 'in flight at most, per run', 'token requests per run', 'peak RSS MiB', 'items/s per run'],
			rows,
		),
		'',
		`Small batch: ${SMALL_BATCH.items} items at ${SMALL_BATCH.latencyMs} ms latency, each run a fresh \`n8n execute\` with a fresh Clinic credential (its sign-in included), medians of ${options.runs} runs after a warm-up run.`,
		'',
		table(['Variant', 'items/s', 'node ms', 'vs HTTP default', 'in flight at most, per run', 'token requests per run', 'items/s per run'], smallRows),
		'',
		`Rate limit: the simulator accepts ${RATE_LIMIT.requestsPerSecond} requests per second (sliding second; refused requests do not count) ` +
			'and answers 429 with `Retry-After` (whole seconds until a request fits) past it; 0 ms latency, one run each. ' +
			'The HTTP Request node has no retry at its defaults: its run stops at the first 429; the third row counts the items it fails when told to continue.',
		'',
		table(
			['Variant', '429 answers', 'requests seen', 'node ms', 'items ok', 'items failed', 'all in order', 'token requests', 'run'],
			limited.map((run) => [
				run.label,
				fmt(run.answered429),
				fmt(run.requests),
				fmt(run.ms),
				fmt(run.itemsOk),
				fmt(run.itemsFailed),
				run.inOrder ? 'yes' : 'no',
				fmt(run.tokens),
				run.error ? `failed: ${run.error.slice(0, 160)}` : 'succeeded',
			]),
		),
		'',
		`At ${RATE_LIMIT.requestsPerSecond} requests per second, ${count} items need at least ${fmt((count / RATE_LIMIT.requestsPerSecond) * 1000)} ms.`,
		'',
		'Two executions at once in one n8n process share the limiter: `test/e2e/parallelRequests.test.ts` ' +
			'runs two webhook workflows together in `n8n start` and checks that the simulator never answers more than their maximum at once.',
	].join('\n');
	return { title: '8. Parallel Requests: Automatic (the default) vs the HTTP Request node', markdown, goals };
}
