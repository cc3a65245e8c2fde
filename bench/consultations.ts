/**
 * (1) 1,000 items -> Consultation Get: the Clinic node vs n8n's HTTP Request node (4.2,
 * fixed bearer header; default settings and Batching at 1 item per batch) vs a bare
 * keep-alive client (the wire limit), with 0 ms and 20 ms simulated latency.
 */
import { MAX_PARALLEL_REQUESTS } from '../nodes/Clinic/actions/scheduler';
import type { Bench, Goal, Sample, SectionResult } from './lib/bench';
import { importAll, medianOf, roundLabel } from './lib/bench';
import type { CredentialImport, RunItem, WorkflowImport } from './lib/n8n';
import { outputItems, timedExecute } from './lib/n8n';
import { countTokens, fetchAccessToken, type Simulator } from './lib/sim';
import { fmt, mib, perSecond, ratio, runsList, table } from './lib/stats';
import { wireRun } from './lib/wire';
import { MEASURED, NO_OP_NODE, batching, clinicCredential, clinicNode, httpRequestNode, itemsThen } from './lib/workflows';

const LATENCIES_MS = [0, 20];

/** The id each input item asks for (the Code node's ids cycle 1..3: the seeded consultations). */
export const expectedId = (index: number): number => (index % 3) + 1;

/** `baseline`: the same workflow with n8n's No Operation node, for n8n's own CPU. */
type Kind = 'clinic' | 'http' | 'wire' | 'baseline';

interface Variant {
	key: string;
	label: string;
	kind: Kind;
	/** Clinic: options.parallelRequests (undefined: the node's default). */
	parallel?: number;
	/** HTTP Request node options. */
	httpOptions?: Record<string, unknown>;
	/** Bare client: requests in flight. */
	concurrency?: number;
}

const VARIANTS: Variant[] = [
	{ key: 'clinic1', label: 'Clinic node, Parallel Requests 1', kind: 'clinic', parallel: 1 },
	{ key: 'clinicMax', label: `Clinic node, Parallel Requests ${MAX_PARALLEL_REQUESTS} (upper bound)`, kind: 'clinic', parallel: MAX_PARALLEL_REQUESTS },
	{ key: 'http', label: 'HTTP Request 4.2, default', kind: 'http', httpOptions: {} },
	// Batching only pauses between starting batches; with no pause it changes nothing.
	{ key: 'httpBatch0', label: 'HTTP Request 4.2, Batching 1 item, 0 ms interval', kind: 'http', httpOptions: batching(1, 0) },
	{ key: 'httpBatch1', label: 'HTTP Request 4.2, Batching 1 item, 1 ms interval', kind: 'http', httpOptions: batching(1, 1) },
	{ key: 'wire1', label: 'bare keep-alive client, 1 in flight', kind: 'wire', concurrency: 1 },
	{ key: 'wire16', label: 'bare keep-alive client, 16 in flight', kind: 'wire', concurrency: 16 },
	{ key: 'baseline', label: 'baseline: Items -> No Operation (no request)', kind: 'baseline' },
];

/** Output ids in input order and paired to their input item. */
export function pairingKept(items: RunItem[], count: number, idOf: (item: RunItem) => unknown): boolean {
	if (items.length !== count) return false;
	return items.every((item, index) => {
		const paired = item.pairedItem as { item?: number } | undefined;
		return Number(idOf(item)) === expectedId(index) && (paired === undefined || paired.item === index);
	});
}

export const clinicId = (item: RunItem): unknown => item.json.id;

/**
 * Items -> Clinic Consultation Get (`parallel`: options.parallelRequests, undefined for
 * the node's default), with a credential of its own so that the run starts without a token.
 */
export function consultationGetWorkflow(
	sim: Simulator,
	name: string,
	count: number,
	parallel: number | undefined,
): { credential: CredentialImport; workflow: WorkflowImport } {
	const credential = clinicCredential(sim, name);
	const workflow = itemsThen(
		name,
		count,
		clinicNode(credential, {
			resource: 'consultation',
			operation: 'get',
			consultationId: '={{ $json.id }}',
			options: parallel ? { parallelRequests: parallel } : {},
		}),
	);
	return { credential, workflow };
}

const httpId = (item: RunItem): unknown => (item.json.consultation as { id?: unknown } | undefined)?.id;

export async function measureConsultations(bench: Bench): Promise<SectionResult> {
	const { sim, options } = bench;
	const count = options.quick ? 200 : 1000;
	const rounds = options.runs + 1;
	sim.reset();
	const bearer = await fetchAccessToken(sim);
	const consultationUrl = `${sim.apiBaseUrl}/consultations/{{ $json.id }}`;

	// One workflow per Clinic run, each with its own fresh credential (no stored token):
	// every run signs in once. The HTTP Request workflows carry the fixed header.
	const credentials: CredentialImport[] = [];
	const workflows: WorkflowImport[] = [];
	const clinicWorkflows = new Map<string, string>(); // `${variant}/${latency}/${round}` -> id
	const fixedWorkflows = new Map<string, string>(); // variant -> id (HTTP Request, baseline)
	for (const variant of VARIANTS) {
		if (variant.kind === 'http' || variant.kind === 'baseline') {
			const workflow = itemsThen(
				`bench 1: ${variant.label}`,
				count,
				variant.kind === 'http' ? httpRequestNode(`=${consultationUrl}`, bearer, variant.httpOptions) : NO_OP_NODE,
			);
			workflows.push(workflow);
			fixedWorkflows.set(variant.key, workflow.id!);
		}
		if (variant.kind !== 'clinic') continue;
		for (const latency of LATENCIES_MS) {
			for (let round = 0; round < rounds; round++) {
				const { credential, workflow } = consultationGetWorkflow(
					sim,
					`bench 1: ${variant.label}, ${latency} ms, round ${round}`,
					count,
					variant.parallel,
				);
				credentials.push(credential);
				workflows.push(workflow);
				clinicWorkflows.set(`${variant.key}/${latency}/${round}`, workflow.id!);
			}
		}
	}
	bench.log(`[1] importing ${credentials.length} credentials and ${workflows.length} workflows`);
	await importAll(bench, credentials, workflows);

	const samples = new Map<string, Sample[]>(); // `${variant}/${latency}`
	const pairingFailures: string[] = [];
	for (const latency of LATENCIES_MS) {
		sim.setLatency(latency);
		for (let round = 0; round < rounds; round++) {
			for (const variant of VARIANTS) {
				// n8n's own cost does not depend on the service's latency: measured once.
				if (variant.kind === 'baseline' && latency !== LATENCIES_MS[0]) continue;
				const sample = await runVariant(variant, latency, round);
				bench.log(
					`[1] ${latency} ms ${variant.label} ${roundLabel(round, options.runs)}: ` +
						`${fmt(sample.ms)} ms, ${fmt(sample.itemsPerSecond)} items/s, tokens ${sample.tokens ?? '-'}, ` +
						`RSS ${mib(sample.peakRss)} MiB, CPU ${fmt(sample.cpuMs)} ms`,
				);
				if (round === 0) continue;
				const key = `${variant.key}/${latency}`;
				samples.set(key, [...(samples.get(key) ?? []), sample]);
			}
		}
	}
	sim.setLatency(0);

	async function runVariant(variant: Variant, latency: number, round: number): Promise<Sample> {
		if (variant.kind === 'wire') {
			const { value: result, tokens } = await countTokens(sim, () =>
				wireRun(count, (i) => `${sim.apiBaseUrl}/consultations/${expectedId(i)}`, {
					concurrency: variant.concurrency!,
					headers: { authorization: `Bearer ${bearer}`, accept: 'application/json' },
				}),
			);
			const ok = result.bodies.every(
				(body, i) => (body as { consultation?: { id?: number } }).consultation?.id === expectedId(i),
			);
			if (!ok) pairingFailures.push(`${variant.label}, ${latency} ms, ${roundLabel(round, options.runs)}`);
			return { ms: result.ms, itemsPerSecond: perSecond(count, result.ms), tokens };
		}
		const workflowId =
			variant.kind === 'clinic' ? clinicWorkflows.get(`${variant.key}/${latency}/${round}`)! : fixedWorkflows.get(variant.key)!;
		const { value: run, tokens } = await countTokens(sim, () => timedExecute(bench.ctx, workflowId, MEASURED));
		const items = outputItems(run.node);
		if (!pairingKept(items, count, variant.kind === 'http' ? httpId : clinicId)) {
			pairingFailures.push(`${variant.label}, ${latency} ms, ${roundLabel(round, options.runs)}`);
		}
		return { ms: run.nodeMs, itemsPerSecond: perSecond(count, run.nodeMs), tokens, peakRss: run.peakRss, cpuMs: run.cpuMs };
	}

	// ---- report
	const m = (variant: string, latency: number, key: keyof Sample) => medianOf(samples.get(`${variant}/${latency}`) ?? [], key);
	const baselineCpu = m('baseline', LATENCIES_MS[0], 'cpuMs');
	const rows: string[][] = [];
	for (const latency of LATENCIES_MS) {
		for (const variant of VARIANTS) {
			const list = samples.get(`${variant.key}/${latency}`) ?? [];
			if (list.length === 0) continue;
			const ips = m(variant.key, latency, 'itemsPerSecond');
			const tokens = list.map((s) => s.tokens ?? Number.NaN);
			const inN8n = variant.kind !== 'wire';
			const measuresRequests = variant.kind !== 'baseline';
			rows.push([
				variant.label,
				`${latency} ms`,
				measuresRequests ? fmt(ips) : '-',
				fmt(m(variant.key, latency, 'ms')),
				measuresRequests ? ratio(ips, m('http', latency, 'itemsPerSecond')) : '',
				measuresRequests ? ratio(ips, m('httpBatch1', latency, 'itemsPerSecond')) : '',
				measuresRequests ? ratio(ips, m('wire1', latency, 'itemsPerSecond')) : '',
				inN8n && measuresRequests ? fmt((m(variant.key, latency, 'cpuMs') - baselineCpu) / count, 2) : '',
				inN8n ? fmt(m(variant.key, latency, 'cpuMs') / 1000, 1) : '',
				tokens.every((t) => t === 0) ? '0' : runsList(tokens),
				inN8n ? mib(m(variant.key, latency, 'peakRss')) : '(bench process)',
				measuresRequests ? runsList(list.map((s) => s.itemsPerSecond)) : '',
			]);
		}
	}

	const clinicTokens = VARIANTS.filter((v) => v.kind === 'clinic').flatMap((v) =>
		LATENCIES_MS.flatMap((latency) => (samples.get(`${v.key}/${latency}`) ?? []).map((s) => s.tokens)),
	);
	const ratioAt0 = m('clinic1', 0, 'itemsPerSecond') / m('http', 0, 'itemsPerSecond');
	const maxRatioAt0 = m('clinicMax', 0, 'itemsPerSecond') / m('http', 0, 'itemsPerSecond');
	const goals: Goal[] = [
		{
			text: '(1) Clinic node with Parallel Requests 1 (one item after the other) at least as fast as the HTTP Request node (default) with no latency',
			met: Number.isFinite(ratioAt0) ? ratioAt0 >= 1 : undefined,
			detail:
				`${fmt(m('clinic1', 0, 'itemsPerSecond'))} vs ${fmt(m('http', 0, 'itemsPerSecond'))} items/s = ${fmt(ratioAt0, 2)}x; n8n CPU per item ` +
				`${fmt((m('clinic1', 0, 'cpuMs') - baselineCpu) / count, 2)} ms vs ${fmt((m('http', 0, 'cpuMs') - baselineCpu) / count, 2)} ms`,
		},
		{
			text: `(1) Clinic node with Parallel Requests ${MAX_PARALLEL_REQUESTS} (upper bound) at least as fast as the HTTP Request node (default) with no latency`,
			met: Number.isFinite(maxRatioAt0) ? maxRatioAt0 >= 1 : undefined,
			detail:
				`${fmt(m('clinicMax', 0, 'itemsPerSecond'))} vs ${fmt(m('http', 0, 'itemsPerSecond'))} items/s = ${fmt(maxRatioAt0, 2)}x; n8n CPU per item ` +
				`${fmt((m('clinicMax', 0, 'cpuMs') - baselineCpu) / count, 2)} ms`,
		},
		{
			text: '(1) exactly one token request per Clinic run (fresh credential each run)',
			met: clinicTokens.length > 0 && clinicTokens.every((t) => t === 1),
			detail: `token requests per run: ${clinicTokens.join(', ')}`,
		},
		{
			text: '(1) outputs in input order, paired to their inputs',
			met: pairingFailures.length === 0,
			detail: pairingFailures.length === 0 ? 'all runs' : `broken in: ${pairingFailures.join('; ')}`,
		},
	];

	const markdown = [
		`${count} input items (ids cycling over the 3 seeded consultations) -> GET /consultations/{id}. ` +
			`Node time is n8n's own \`executionTime\` of the measured node; medians of ${options.runs} runs after a warm-up run. ` +
			'Ratios: items/s of the row divided by items/s of the HTTP Request node (default), ' +
			'of the HTTP Request node with Batching at 1 item per batch and a 1 ms interval, and of the bare client with 1 request in flight, at the same latency. ' +
			'Each Clinic run uses a credential imported fresh (no stored token). Peak RSS: VmHWM of the `n8n execute` process. ' +
			'n8n CPU: user + system time of the `n8n execute` process (boot, Code node hand-over and printing the run included; ' +
			'task runners not included); CPU ms per item: that minus the baseline run\'s (same workflow with No Operation instead of the request), per item.',
		'',
		'The HTTP Request node (4.2) starts every item\'s request without waiting for the answers and awaits them all at the end; ' +
			'its Batching option only sleeps `batchInterval` ms between starting batches (`HttpRequestV3.node.js`: ' +
			'`if (itemIndex > 0 && batchSize >= 0 && batchInterval > 0) { if (itemIndex % batchSize === 0) await sleep(batchInterval); }`). ' +
			'So "1 item per batch" with a 0 ms interval is the default behaviour, and with 1 ms it starts at most one request per ms ' +
			'but never waits for one to finish: there is no "one request at a time" setting in that node. ' +
			'The one-at-a-time reference is the bare client with 1 request in flight.',
		'',
		table(
			[
				'Variant',
				'Latency',
				'items/s',
				'node ms',
				'vs HTTP default',
				'vs HTTP batching 1 item/1 ms',
				'vs wire (1 in flight)',
				'n8n CPU ms per item',
				'n8n CPU s',
				'token requests per run',
				'peak RSS MiB',
				'items/s per run',
			],
			rows,
		),
	].join('\n');
	return { title: '1. Consultation Get: Clinic node vs HTTP Request node vs the wire', markdown, goals };
}
