/**
 * `npm run bench [-- --n8n 1.123.81] [--quick] [--runs N] [--only 1,3] [--out FILE] [--env KEY=VALUE]`
 *
 * Runs the measurements (issue 7, and the catch-up after downtime) in real n8n (default 2.41.1) against the
 * simulator on loopback, prints a table per measurement (medians of several runs after a
 * warm-up run) and writes them with the machine's description to bench/RESULTS.md;
 * a sixth section gathers the evidence of where the time goes (traces, CPU profiles).
 * Not part of the tests.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { MAX_PARALLEL_REQUESTS } from '../nodes/Clinic/actions/scheduler';
import { measureAdaptive } from './adaptive';
import { measureCatchUp } from './catchup';
import { measureConsultations } from './consultations';
import { measureDatabaseWork } from './databaseWork';
import { measureDeliveries } from './deliveries';
import { measureDiagnostics } from './diagnostics';
import { measureEvents } from './events';
import { measureLogReads } from './logReads';
import type { Bench, BenchOptions, SectionResult } from './lib/bench';
import { machineInfo } from './lib/machine';
import { benchContext } from './lib/n8n';
import { majorOf } from '../test/e2e/harness';
import type { StoredSection } from './lib/sections';
import { loadSections, mergeSections, saveSections } from './lib/sections';
import { startBenchSimulator } from './lib/sim';
import { table } from './lib/stats';
import { measureParallel } from './parallel';
import { measurePdf } from './pdf';
import { measureQueue } from './queue';

const MEASUREMENTS: Array<{ id: number; title: string; run: (bench: Bench) => Promise<SectionResult> }> = [
	{ id: 1, title: '1. Consultation Get: Clinic node vs HTTP Request node vs the wire', run: measureConsultations },
	{ id: 2, title: '2. Parallel Requests', run: measureParallel },
	{ id: 3, title: '3. Event Get Many, Return All', run: measureEvents },
	{ id: 4, title: '4. Download PDF with filesystem binary data', run: measurePdf },
	{ id: 5, title: '5. Signed deliveries: Clinic Trigger vs Webhook node', run: measureDeliveries },
	{ id: 6, title: '6. Where the time goes (diagnostics)', run: measureDiagnostics },
	{ id: 7, title: '7. Catch-up after downtime: Event Log Trigger vs Schedule + Get Many + Remove Duplicates', run: measureCatchUp },
	{ id: 8, title: '8. Parallel Requests: Automatic (the default) vs the HTTP Request node', run: measureAdaptive },
	{ id: 9, title: '9. Queue mode: 1,000 webhook-started executions on 2 workers, Clinic node vs HTTP Request node', run: measureQueue },
	{ id: 10, title: "10. A burst of repeated deliveries with n8n's defaults", run: async (bench) => await measureDeliveries(bench, true) },
	{ id: 11, title: '11. Database work of a burst: Clinic Trigger vs Webhook node', run: measureDatabaseWork },
	{ id: 12, title: "12. The Clinic Trigger's reads of the event log", run: measureLogReads },
];

interface Args extends BenchOptions {
	only: Set<number>;
	out: string;
	/** Extra environment for every n8n process, e.g. N8N_EXPRESSION_ENGINE=legacy. */
	env: Record<string, string>;
}

function parseArgs(argv: string[]): Args {
	const args: Args = {
		version: '2.41.1',
		quick: false,
		runs: 0,
		only: new Set(MEASUREMENTS.map((m) => m.id)),
		out: join(__dirname, 'RESULTS.md'),
		env: {},
	};
	for (let i = 0; i < argv.length; i++) {
		const flag = argv[i];
		const value = () => {
			const next = argv[++i];
			if (next === undefined) throw new Error(`${flag} needs a value`);
			return next;
		};
		if (flag === '--n8n') args.version = value();
		else if (flag === '--quick') args.quick = true;
		else if (flag === '--runs') args.runs = Number(value());
		else if (flag === '--only') args.only = new Set(value().split(',').map(Number));
		else if (flag === '--out') args.out = value();
		else if (flag === '--env') {
			const [key, ...rest] = value().split('=');
			if (!/^[A-Z][A-Z0-9_]*$/.test(key) || rest.length === 0) throw new Error('--env needs KEY=VALUE');
			args.env[key] = rest.join('=');
		}
		else throw new Error(`unknown argument ${flag} (see bench/run.ts)`);
	}
	if (!args.runs) args.runs = args.quick ? 2 : 5;
	if (!Number.isInteger(args.runs) || args.runs < 1 || args.runs > 20) throw new Error('--runs must be 1..20');
	return args;
}

/**
 * What the measurements and diagnostics show limits speed. Mechanisms found in n8n's own
 * code (paths given) and in section 6; the figures are in the sections.
 */
const NOTES = [
	'## What limits speed',
	'',
	'- **Per item, the Clinic node costs about what the HTTP Request node costs.** Sections 1-2 give n8n\'s CPU per item ' +
		'(CPU of `n8n execute` minus a No Operation run with the same items) and section 6 where it goes: on n8n 2.x the ' +
		'largest single part is evaluating the item\'s expression (`{{ $json.id }}`) in n8n\'s isolated-vm expression engine ' +
		'(`@n8n/expression-runtime`, `isolated-vm-bridge.js` `execute`), which both nodes pay once per item; then n8n\'s HTTP ' +
		'helpers (axios), which build new agents for every request (`@n8n/backend-network` `setAxiosAgents` -> `buildNodeAgents`), ' +
		'so every request opens a new TCP connection (`internalConnect` in the profiles). The Clinic node\'s own code is a ' +
		'few percent of the samples; the credential is decrypted once per execution (the node passes `credentialsDecrypted` ' +
		'to `httpRequestWithAuthentication`, so n8n does not load and decrypt it per request) and the token is fetched once.',
	'- **What differs is how many requests are in flight.** The HTTP Request node starts every item\'s request before ' +
		'awaiting any (its Batching only pauses between starts), so all waiting overlaps, and n8n\'s other threads (garbage ' +
		'collection, the expression isolate) and the service work at the same time as its main thread. The Clinic node lets ' +
		`at most Parallel Requests items (default Automatic: a limiter per service host finds the number, up to ${MAX_PARALLEL_REQUESTS}) talk to the service at once, in input order, ` +
		'and the next items read their parameters meanwhile (up to twice Parallel Requests ahead), 16 back to back at a time ' +
		'(which costs n8n less per item) with a pause between batches so that answers are handled in between; while the ' +
		'credential signs in, up to 128 items are read, so that storing the new token, which takes n8n\'s thread several times, ' +
		'is not held up (one request has n8n sign in and store the token; the others wait for it). ' +
		'With a fixed 1, every answer is waited for before the next request: even at 0 ms latency each item then ' +
		'costs n8n\'s work for it plus a full round trip on a fresh connection, one after the other. That is the price of ' +
		'"one item after the other"; Automatic (section 8) removes it and still backs off when the service says it is busy.',
	'- **Memory of many downloads (section 4):** the Clinic node holds nothing per file (live heap after a full ' +
		'collection, with n8n\'s legacy expression engine). With n8n 2.x\'s default engine, every expression evaluation leaves ' +
		'callbacks in the isolated-vm bridge that keep the item\'s data proxy alive until the isolate collects its own ' +
		'garbage; that, and garbage from new HTTP agents per request, is the growth of peak RSS with the number of files.',
	'- **Receiving webhooks (n8n 2.x):** n8n skips creating an expression isolate for the webhook phase only for its own ' +
		'Webhook node (`n8n/dist/webhooks/live-webhooks.js` `webhookPhaseNeedsIsolate`: `startNode.type !== WEBHOOK_NODE_TYPE` ' +
		'-> needs one); every other trigger, the Clinic Trigger included, gets an isolate created and disposed per request ' +
		'on top of the one each execution gets. No node can opt in. A credential read outside an execution (a webhook\'s ' +
		'`getCredentials`) is a database query and acquires an expression isolate of its own (`n8n/dist/credentials-helper.js` ' +
		'`applyDefaultsAndOverwrites`: `new Workflow` -> `acquireIsolate`, as `getCredentials` in a webhook passes no ' +
		'execution to resolve expressions with). The Clinic Trigger keeps its credential in memory for 4 s between deliveries, so a steady stream pays that read about ' +
		'once per 4 s. Section 5 sets the Clinic Trigger beside n8n\'s Webhook node, the same with Header Auth (a credential read ' +
		'per request), a bare community trigger that only emits the body, and the workflow a user builds without this package.',
	'- **The machine:** 2 CPUs shared by n8n, its task runner, and the benchmark process (simulator, bare client, senders); ' +
		'run-to-run spread is large, hence medians, and the per-run figures are shown.',
	'',
].join('\n');

function goalMark(met: boolean | undefined): string {
	return met === undefined ? 'not measured' : met ? 'met' : '**missed**';
}

async function main(): Promise<void> {
	const argv = process.argv.slice(2);
	const args = parseArgs(argv);
	const command = ['npm run bench', ...(argv.length ? ['--', ...argv] : [])].join(' ');
	const log = (message: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
	const startedAt = new Date();

	log(`bench: n8n ${args.version}, ${args.runs} measured runs per variant after a warm-up${args.quick ? ' (quick)' : ''}`);
	const sim = await startBenchSimulator();
	const ctx = await benchContext(args.version, args.env);
	const bench: Bench = { options: args, ctx, sim, log };
	const machine = machineInfo(ctx.install.nodeBin);
	const sections: SectionResult[] = [];
	const measured: StoredSection[] = [];
	try {
		for (const measurement of MEASUREMENTS) {
			if (!args.only.has(measurement.id)) continue;
			log(`--- ${measurement.title}`);
			try {
				sections.push(await measurement.run(bench));
			} catch (error) {
				log(`${measurement.title} failed: ${(error as Error).stack ?? String(error)}`);
				sections.push({
					title: majorOf(args.version) === 1 ? `${measurement.title} (n8n ${args.version})` : measurement.title,
					markdown: `Could not be measured in this run:\n\n\`\`\`\n${(error as Error).message.slice(0, 2000)}\n\`\`\``,
					goals: [],
				});
			}
			process.stdout.write(`\n## ${sections.at(-1)!.title}\n\n${sections.at(-1)!.markdown}\n`);
			// A section measured on n8n 1.x stands beside its 2.x figures (5.1 after 5), not in their place.
			const id = majorOf(args.version) === 1 ? measurement.id + 0.1 : measurement.id;
			measured.push({ ...sections.at(-1)!, id, measuredAt: new Date().toISOString(), command });
		}
	} finally {
		await ctx.dispose();
		await sim.close();
	}

	// Sections not measured now keep their figures from the run that measured them.
	const sectionsFile = join(dirname(args.out), args.out.endsWith('RESULTS.md') ? 'results.json' : 'results-other.json');
	const all = mergeSections(loadSections(sectionsFile, args.out), measured);
	saveSections(sectionsFile, all);
	const goals = all.flatMap((s) => s.goals);
	const report = [
		'# Benchmarks',
		'',
		'Issue 7: the Clinic node against n8n\'s HTTP Request node and against the wire, in real n8n, ' +
			'against the simulator (test/simulator) on loopback. Not part of the tests.',
		'',
		`Command of this run: \`${command}\``,
		'',
		table(
			['Machine', ''],
			[
				['Date of this run', `${startedAt.toISOString()} (each section says when it was measured)`],
				['CPUs (nproc)', machine.cpus],
				['CPU model', machine.cpuModel],
				['Memory', machine.memory],
				['OS', machine.os],
				['n8n', `${args.version} (Node ${machine.n8nNode}), \`n8n execute\` / \`n8n start\`, sqlite`],
				['Benchmark process (simulator, bare client, senders)', `Node ${machine.benchNode}`],
				['Runs', `${args.runs} measured runs per variant after one warm-up run (section 5: at most 3); medians`],
				['Extra n8n environment', Object.entries(args.env).map(([k, v]) => `${k}=${v}`).join(', ') || 'none (the harness\'s, see test/e2e/harness/env.ts)'],
			],
		),
		'',
		'The simulator, the bare client and the delivery senders run in the benchmark process, ' +
			'on the same CPUs as n8n: with few CPUs they compete with n8n, which is part of the figures.',
		'',
		'## Goals',
		'',
		table(['Goal', 'Result', 'Figures'], goals.map((g) => [g.text, goalMark(g.met), g.detail])),
		'',
		NOTES,
		...all.flatMap((s) => [`## ${s.title}`, '', `Measured ${s.measuredAt} with \`${s.command}\`.`, '', s.markdown, '']),
	].join('\n');
	writeFileSync(args.out, report, 'utf8');
	process.stdout.write(`\n## Goals\n\n${table(['Goal', 'Result', 'Figures'], goals.map((g) => [g.text, goalMark(g.met), g.detail]))}\n`);
	log(`wrote ${args.out}`);
}

main().catch((error: unknown) => {
	process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
	process.exitCode = 1;
});
