/**
 * Where the time of one measured node goes, for the "what limits speed" notes in
 * RESULTS.md: runs Items -> Consultation Get once in real n8n under V8's CPU profiler
 * (`n8n execute` with `--cpu-prof`) and summarises the samples taken while the measured
 * node ran: idle share, self time by package, top functions, and a few inclusive buckets.
 *
 *   npx ts-node --transpile-only bench/profile.ts [--n8n 2.41.1] [--node clinic|http]
 *     [--items 3000] [--parallel 1] [--latency 0]
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { consultationGetWorkflow } from './consultations';
import { importAll, type Bench } from './lib/bench';
import { benchContext, timedExecute } from './lib/n8n';
import { fetchAccessToken, startBenchSimulator } from './lib/sim';
import { fmt, table } from './lib/stats';
import { MEASURED, httpRequestNode, itemsThen } from './lib/workflows';

interface ProfileNode {
	id: number;
	callFrame: { functionName: string; url: string; lineNumber: number };
	children?: number[];
}
interface CpuProfile {
	nodes: ProfileNode[];
	samples: number[];
	timeDeltas: number[];
}

/** Inclusive buckets: a sample counts when one of its frames matches. */
const BUCKETS: Array<[string, RegExp]> = [
	['expression evaluation (getNodeParameter)', /^_getNodeParameter /],
	['n8n HTTP stack (axios, agents, sockets)', /^(dispatchHttpRequest|httpAdapter) /],
	['credential hooks (preAuthentication, authenticate)', /^(preAuthentication|authenticate) .*credentials-helper/],
	['garbage collector', /^\(garbage collector\)/],
];

function frameName(node: ProfileNode): string {
	const { functionName, url, lineNumber } = node.callFrame;
	return `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '')}:${lineNumber}`;
}

function packageOf(node: ProfileNode): string {
	const { url, functionName } = node.callFrame;
	const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
	if (match) return match[1];
	if (url.startsWith('node:')) return 'node (core)';
	return url ? url.replace(/^.*\//, '') : functionName;
}

/** Summary of the samples taken while frames from `marker` files were on the stack. */
export function summarise(profile: CpuProfile, marker: RegExp): string {
	const byId = new Map(profile.nodes.map((node) => [node.id, node]));
	const parent = new Map<number, number>();
	for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
	const stack = (id: number): ProfileNode[] => {
		const frames: ProfileNode[] = [];
		for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) frames.push(byId.get(at)!);
		return frames;
	};
	const times: number[] = [];
	let clock = 0;
	for (const delta of profile.timeDeltas) times.push((clock += delta));
	const inMarker = (id: number) =>
		stack(id).some((node) => marker.test(node.callFrame.url) && node.callFrame.functionName !== '');
	// The node's frames also show up while n8n loads it; the run is the largest cluster of
	// samples with its frames (no gap over a second).
	const hits = profile.samples.flatMap((id, i) => (inMarker(id) ? [times[i]] : []));
	let best = { first: Infinity, last: -Infinity, count: 0 };
	let current = { first: hits[0], last: hits[0], count: 0 };
	for (const at of hits) {
		if (at - current.last > 1_000_000) current = { first: at, last: at, count: 0 };
		current.last = at;
		current.count += 1;
		if (current.count > best.count) best = { ...current };
	}
	const { first, last } = best;

	const self = new Map<string, number>();
	const packages = new Map<string, number>();
	const buckets = new Map<string, number>();
	let total = 0;
	let idle = 0;
	profile.samples.forEach((id, i) => {
		if (times[i] < first || times[i] > last) return;
		const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
		total += ms;
		const node = byId.get(id)!;
		if (node.callFrame.functionName === '(idle)') {
			idle += ms;
			return;
		}
		self.set(frameName(node), (self.get(frameName(node)) ?? 0) + ms);
		packages.set(packageOf(node), (packages.get(packageOf(node)) ?? 0) + ms);
		const names = stack(id).map(frameName);
		for (const [bucket, pattern] of BUCKETS) {
			if (names.some((name) => pattern.test(name))) buckets.set(bucket, (buckets.get(bucket) ?? 0) + ms);
		}
	});
	const top = (map: Map<string, number>, n: number) =>
		[...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, ms]) => [name, fmt(ms), fmt((100 * ms) / total, 1)]);
	return [
		`samples while the node ran: ${fmt((last - first) / 1000)} ms, of which idle (waiting on the network) ${fmt(idle)} ms = ${fmt((100 * idle) / total, 1)}%.`,
		'',
		table(['Inclusive bucket', 'ms', '% of window'], top(buckets, BUCKETS.length)),
		'',
		table(['Package (self time)', 'ms', '% of window'], top(packages, 12)),
		'',
		table(['Function (self time)', 'ms', '% of window'], top(self, 15)),
	].join('\n');
}

export interface ProfileOptions {
	kind: 'clinic' | 'http';
	items: number;
	parallel: number;
	latency: number;
}

/** One profiled run of Items -> Consultation Get in the bench's n8n; its summary as Markdown. */
export async function profileConsultationGet(bench: Bench, options: ProfileOptions): Promise<string> {
	const { sim, ctx } = bench;
	sim.reset();
	sim.setLatency(options.latency);
	try {
		const { credential, workflow: clinic } = consultationGetWorkflow(sim, `profile ${options.kind}`, options.items, options.parallel);
		const workflow =
			options.kind === 'clinic'
				? clinic
				: itemsThen(
						`profile ${options.kind}`,
						options.items,
						httpRequestNode(`=${sim.apiBaseUrl}/consultations/{{ $json.id }}`, await fetchAccessToken(sim)),
					);
		await importAll(bench, [credential], [workflow]);
		const dir = mkdtempSync(join(ctx.rootDir, 'cpu-profile-'));
		const run = await timedExecute(ctx, workflow.id!, MEASURED, {
			env: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir} --cpu-prof-interval=200` },
		});
		// The main process writes the largest profile (task runners write their own).
		const file = readdirSync(dir)
			.map((name) => join(dir, name))
			.sort((a, b) => statSync(b).size - statSync(a).size)[0];
		const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
		rmSync(dir, { recursive: true, force: true });
		const marker = options.kind === 'clinic' ? /n8n-nodes-clinic\/dist\/nodes\// : /HttpRequestV3\.node\.js/;
		return (
			`${options.items} items, ${options.kind === 'clinic' ? `Clinic node, Parallel Requests ${options.parallel}` : 'HTTP Request 4.2, default'}, ` +
			`${options.latency} ms latency: node ${fmt(run.nodeMs)} ms under the profiler (${fmt((options.items * 1000) / run.nodeMs)} items/s); ` +
			summarise(profile, marker)
		);
	} finally {
		sim.setLatency(0);
	}
}

async function main(): Promise<void> {
	const args = new Map<string, string>();
	const argv = process.argv.slice(2);
	for (let i = 0; i < argv.length; i += 2) args.set(argv[i].replace(/^--/, ''), argv[i + 1]);
	const version = args.get('n8n') ?? '2.41.1';
	const sim = await startBenchSimulator();
	const ctx = await benchContext(version);
	const bench: Bench = { options: { version, quick: false, runs: 1 }, ctx, sim, log: () => undefined };
	try {
		const summary = await profileConsultationGet(bench, {
			kind: args.get('node') === 'http' ? 'http' : 'clinic',
			items: Number(args.get('items') ?? 3000),
			parallel: Number(args.get('parallel') ?? 1),
			latency: Number(args.get('latency') ?? 0),
		});
		process.stdout.write(`n8n ${version}: ${summary}\n`);
	} finally {
		await ctx.dispose();
		await sim.close();
	}
}

if (require.main === module) {
	main().catch((error: unknown) => {
		process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
		process.exitCode = 1;
	});
}
