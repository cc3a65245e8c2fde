/**
 * 6. Where the time goes: not a measurement with goals but the evidence behind the notes.
 * - Traced runs (bench/lib/trace-http.js preloaded into `n8n execute`) of Consultation Get
 *   at 20 ms latency: how busy n8n's event loop and CPU were while the node ran, and how
 *   long each request waited for its connection and for its answer, seen from n8n.
 * - CPU profiles (bench/profile.ts) at 0 ms latency: which code the CPU time went to.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { MAX_PARALLEL_REQUESTS } from '../nodes/Clinic/actions/scheduler';
import { consultationGetWorkflow } from './consultations';
import type { Bench, SectionResult } from './lib/bench';
import { importAll } from './lib/bench';
import type { CredentialImport, WorkflowImport } from './lib/n8n';
import { timedExecute } from './lib/n8n';
import { fetchAccessToken } from './lib/sim';
import { fmt, median, perSecond, table } from './lib/stats';
import { MEASURED, httpRequestNode, itemsThen } from './lib/workflows';
import { profileConsultationGet } from './profile';

const LATENCY_MS = 20;

interface Trace {
	requests: Array<{ created: number; connected?: number; sent?: number; headers?: number; done?: number }>;
	samples: Array<{ at: number; active: number; idle: number; cpuMicros: number }>;
}

function quantile(values: number[], q: number): number {
	const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
	return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : Number.NaN;
}

/** Loop utilisation, CPU and request phases over the window of the node's last `count` requests. */
function summariseTrace(trace: Trace, count: number) {
	const requests = trace.requests.filter((r) => r.done !== undefined).slice(-count);
	const from = requests[0]?.created ?? 0;
	const to = requests.at(-1)?.done ?? 0;
	const window = trace.samples.filter((s) => s.at >= from && s.at <= to + 50);
	const active = window.reduce((sum, s) => sum + s.active, 0);
	const idle = window.reduce((sum, s) => sum + s.idle, 0);
	const cpuMs = window.length > 1 ? (window.at(-1)!.cpuMicros - window[0].cpuMicros) / 1000 : Number.NaN;
	const spanMs = window.length > 1 ? window.at(-1)!.at - window[0].at : Number.NaN;
	return {
		loopBusy: (100 * active) / (active + idle),
		cpuPercent: (100 * cpuMs) / spanMs,
		connectWait: median(requests.map((r) => (r.connected ?? Number.NaN) - r.created)),
		answer: median(requests.map((r) => (r.headers ?? Number.NaN) - (r.sent ?? Number.NaN))),
		answerP90: quantile(requests.map((r) => (r.headers ?? Number.NaN) - (r.sent ?? Number.NaN)), 0.9),
		traced: requests.length,
	};
}

export async function measureDiagnostics(bench: Bench): Promise<SectionResult> {
	const { sim, options, ctx } = bench;
	const count = options.quick ? 300 : 1000;
	sim.reset();
	const bearer = await fetchAccessToken(sim);

	const variants: Array<{ label: string; build: () => { credential?: CredentialImport; workflow: WorkflowImport } }> = [
		{ label: 'Clinic node, Parallel Requests 1', build: () => consultationGetWorkflow(sim, 'bench 6: p1', count, 1) },
		{
			label: `Clinic node, Parallel Requests ${MAX_PARALLEL_REQUESTS}`,
			build: () => consultationGetWorkflow(sim, 'bench 6: pmax', count, MAX_PARALLEL_REQUESTS),
		},
		{
			label: 'HTTP Request 4.2, default',
			build: () => ({
				workflow: itemsThen('bench 6: HTTP', count, httpRequestNode(`=${sim.apiBaseUrl}/consultations/{{ $json.id }}`, bearer)),
			}),
		},
	];
	// A warm-up and a traced run of each.
	const plans = variants.map((v) => ({ ...v, runs: [v.build(), v.build()] }));
	await importAll(
		bench,
		plans.flatMap((p) => p.runs.flatMap((r) => (r.credential ? [r.credential] : []))),
		plans.flatMap((p) => p.runs.map((r) => r.workflow)),
	);

	sim.setLatency(LATENCY_MS);
	const rows: string[][] = [];
	const traced = new Map<string, ReturnType<typeof summariseTrace> & { itemsPerSecond: number }>();
	try {
		for (const plan of plans) {
			await timedExecute(ctx, plan.runs[0].workflow.id!, MEASURED);
			const traceFile = join(ctx.rootDir, `trace-${plan.runs[1].workflow.id}.json`);
			const run = await timedExecute(ctx, plan.runs[1].workflow.id!, MEASURED, {
				env: { NODE_OPTIONS: `--require ${join(__dirname, 'lib', 'trace-http.js')}`, CLINIC_BENCH_TRACE: traceFile },
			});
			const trace = summariseTrace(JSON.parse(readFileSync(traceFile, 'utf8')) as Trace, count);
			rmSync(traceFile, { force: true });
			bench.log(`[6] traced ${plan.label}: ${fmt(run.nodeMs)} ms, ${JSON.stringify(trace)}`);
			traced.set(plan.label, { ...trace, itemsPerSecond: perSecond(count, run.nodeMs) });
			rows.push([
				plan.label,
				fmt(perSecond(count, run.nodeMs)),
				fmt(trace.loopBusy),
				fmt(trace.cpuPercent),
				fmt(trace.connectWait, 1),
				fmt(trace.answer, 1),
				fmt(trace.answerP90, 1),
			]);
		}
	} finally {
		sim.setLatency(0);
	}

	const profileItems = options.quick ? 500 : 2000;
	bench.log('[6] CPU profiles');
	const clinicProfile = await profileConsultationGet(bench, { kind: 'clinic', items: profileItems, parallel: 1, latency: 0 });
	const httpProfile = await profileConsultationGet(bench, { kind: 'http', items: profileItems, parallel: 1, latency: 0 });

	const pMax = traced.get(variants[1].label);
	const http = traced.get(variants[2].label);
	// Which limit the upper bound met: n8n's thread (loop saturated) or the requests in flight.
	const saturated = (pMax?.loopBusy ?? 0) >= 90;
	const reading =
		pMax && http
			? `Reading: with ${MAX_PARALLEL_REQUESTS} requests in flight the Clinic node kept n8n's event loop ${fmt(pMax.loopBusy)}% busy; ` +
				`each request waited ${fmt(pMax.connectWait, 1)} ms for its connection and ${fmt(pMax.answer, 1)} ms for an answer the simulator ` +
				`sends after ${LATENCY_MS} ms, because it queues behind the other items' work in n8n's single thread. ` +
				(saturated
					? `n8n's thread is the limit here, not the requests in flight (at most ${MAX_PARALLEL_REQUESTS} / (connection wait + answer) = ` +
						`${fmt((MAX_PARALLEL_REQUESTS * 1000) / (pMax.connectWait + pMax.answer))} items/s; measured ${fmt(pMax.itemsPerSecond)}). `
					: `With at most ${MAX_PARALLEL_REQUESTS} in flight the throughput cannot exceed ${MAX_PARALLEL_REQUESTS} / (connection wait + answer) = ` +
						`${fmt((MAX_PARALLEL_REQUESTS * 1000) / (pMax.connectWait + pMax.answer))} items/s (measured ${fmt(pMax.itemsPerSecond)}). `) +
				`The HTTP Request node starts all ${count} requests at once: the loop is ${fmt(http.loopBusy)}% busy and the ` +
				'waiting overlaps completely, at the price of every request (and its socket) being open at the same time.'
			: '';
	const markdown = [
		`Traced runs: ${count} items -> Consultation Get at ${LATENCY_MS} ms latency, one run each after a warm-up, ` +
			'with `bench/lib/trace-http.js` preloaded into `n8n execute` (it timestamps every outgoing request and samples ' +
			'n8n\'s event-loop utilisation and CPU every 50 ms). "Connection wait": from creating the request to its socket ' +
			'being connected; "answer": from the request sent to the answer\'s headers, as seen by n8n (the simulator itself ' +
			`waits ${LATENCY_MS} ms). CPU can exceed 100%: n8n's expression isolates, GC and libuv run on other threads.`,
		'',
		table(['Variant', 'items/s', 'event loop busy %', 'n8n CPU % of one core', 'connection wait ms (median)', 'answer ms (median)', 'answer ms (p90)'], rows),
		'',
		reading,
		'',
		`CPU profiles (\`bench/profile.ts\`): ${profileItems} items at 0 ms latency, V8's sampling profiler in \`n8n execute\` ` +
			'(which slows everything down), samples restricted to the time the measured node ran.',
		'',
		`**Clinic node, Parallel Requests 1.** ${clinicProfile}`,
		'',
		`**HTTP Request node, default.** ${httpProfile}`,
	].join('\n');
	return { title: '6. Where the time goes (diagnostics)', markdown, goals: [] };
}
