/**
 * (3) Event Get Many with Return All over 50,000 seeded events against 1,000: wall time
 * (the node's executionTime) and peak RSS of `n8n execute`. Two references with the same
 * output: n8n's HTTP Request node paging through GET /events itself (the peer), and a
 * Code node that makes the same events without any request (the output alone). What the
 * Clinic node holds beyond the output is its peak minus the Code node's.
 */
import type { Bench, Goal, Sample, SectionResult } from './lib/bench';
import { importAll, medianOf, roundLabel } from './lib/bench';
import type { RunItem, WorkflowImport } from './lib/n8n';
import { outputItems, timedExecute } from './lib/n8n';
import { fetchAccessToken, type Simulator } from './lib/sim';
import { fmt, mib, perSecond, runsList, signedMib, table } from './lib/stats';
import { MEASURED, clinicCredential, clinicNode, codeNode, manualThen, type NodeSpec } from './lib/workflows';

const PAGE_SIZE = 100;
const MiB = 1024 * 1024;

type Kind = 'clinic' | 'http' | 'code';
const KINDS: Array<{ kind: Kind; label: string }> = [
	{ kind: 'clinic', label: 'Clinic node, Event Get Many, Return All' },
	{ kind: 'http', label: 'HTTP Request 4.2 with pagination (offset/limit)' },
	{ kind: 'code', label: 'Code node making the same events (output only)' },
];

async function firstEvents(sim: Simulator, bearer: string, count: number): Promise<unknown[]> {
	const response = await fetch(`${sim.webhooksBaseUrl}/events?offset=0&limit=${count}`, {
		headers: { authorization: `Bearer ${bearer}`, accept: 'application/json' },
	});
	if (!response.ok) throw new Error(`GET /events answered ${response.status}`);
	return (await response.json()) as unknown[];
}

/** A Code node returning `count` events made from the simulator's own (ids 1..count). */
function eventsCode(templates: unknown[], count: number): string {
	return [
		`const templates = ${JSON.stringify(templates.map((t) => JSON.stringify(t)))};`,
		`return Array.from({ length: ${count} }, (_, i) => {`,
		'\tconst event = JSON.parse(templates[i % templates.length]);',
		'\tevent.id = i + 1;',
		'\tevent.key = `seed-${i + 1}`;',
		'\treturn { json: event };',
		'});',
	].join('\n');
}

/** HTTP Request node: GET /events page by page until an empty page (bounded). */
function pagedHttpNode(sim: Simulator, bearer: string, maxPages: number): NodeSpec {
	return {
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		parameters: {
			url: `${sim.webhooksBaseUrl}/events`,
			sendQuery: true,
			queryParameters: { parameters: [{ name: 'offset', value: '0' }, { name: 'limit', value: String(PAGE_SIZE) }] },
			sendHeaders: true,
			headerParameters: { parameters: [{ name: 'Authorization', value: `Bearer ${bearer}` }] },
			options: {
				pagination: {
					pagination: {
						paginationMode: 'updateAParameterInEachRequest',
						parameters: {
							parameters: [
								{ type: 'qs', name: 'offset', value: `={{ $pageCount * ${PAGE_SIZE} }}` },
								{ type: 'qs', name: 'limit', value: String(PAGE_SIZE) },
							],
						},
						paginationCompleteWhen: 'other',
						completeExpression: '={{ $response.body.length === 0 }}',
						limitPagesFetched: true,
						maxRequests: maxPages,
					},
				},
			},
		},
	};
}

function idsAreOneTo(items: RunItem[], count: number): boolean {
	return items.length === count && items.every((item, index) => item.json.id === index + 1);
}

export async function measureEvents(bench: Bench): Promise<SectionResult> {
	const { sim, options } = bench;
	const sizes = options.quick ? [1_000, 10_000] : [1_000, 50_000];
	const rounds = options.runs + 1;
	sim.reset();
	const bearer = await fetchAccessToken(sim);
	sim.seedEvents(4);
	const templates = await firstEvents(sim, bearer, 4);

	const credential = clinicCredential(sim, 'bench 3');
	const workflows = new Map<string, WorkflowImport>(); // `${kind}/${size}`
	for (const size of sizes) {
		workflows.set(
			`clinic/${size}`,
			manualThen(`bench 3: Clinic ${size}`, clinicNode(credential, { resource: 'event', operation: 'getAll', returnAll: true, pageSize: PAGE_SIZE })),
		);
		workflows.set(`http/${size}`, manualThen(`bench 3: HTTP ${size}`, pagedHttpNode(sim, bearer, Math.ceil(size / PAGE_SIZE) + 2)));
		workflows.set(`code/${size}`, manualThen(`bench 3: Code ${size}`, codeNode(eventsCode(templates, size))));
	}
	bench.log(`[3] importing 1 credential and ${workflows.size} workflows`);
	await importAll(bench, [credential], [...workflows.values()]);

	const samples = new Map<string, Sample[]>();
	const outputMiB = new Map<number, number>();
	const failures: string[] = [];
	for (const size of sizes) {
		sim.reset();
		sim.seedEvents(size);
		for (let round = 0; round < rounds; round++) {
			for (const { kind } of KINDS) {
				const run = await timedExecute(bench.ctx, workflows.get(`${kind}/${size}`)!.id!, MEASURED);
				const items = outputItems(run.node);
				if (!idsAreOneTo(items, size)) failures.push(`${kind} ${size} ${roundLabel(round, options.runs)}: ${items.length} items`);
				if (kind === 'clinic' && !outputMiB.has(size)) {
					outputMiB.set(size, Buffer.byteLength(JSON.stringify(items.map((item) => item.json))) / MiB);
				}
				const sample: Sample = { ms: run.nodeMs, itemsPerSecond: perSecond(size, run.nodeMs), peakRss: run.peakRss };
				bench.log(
					`[3] ${kind} ${size} ${roundLabel(round, options.runs)}: ${fmt(sample.ms)} ms, ${fmt(sample.itemsPerSecond)} events/s, ` +
						`RSS ${mib(sample.peakRss)} MiB`,
				);
				if (round > 0) samples.set(`${kind}/${size}`, [...(samples.get(`${kind}/${size}`) ?? []), sample]);
			}
		}
	}
	sim.reset();

	// ---- report
	const [small, large] = sizes;
	const m = (kind: Kind, size: number, key: keyof Sample) => medianOf(samples.get(`${kind}/${size}`) ?? [], key);
	const growth = (kind: Kind) => m(kind, large, 'peakRss') - m(kind, small, 'peakRss');
	const rows: string[][] = [];
	for (const { kind, label } of KINDS) {
		for (const size of sizes) {
			const list = samples.get(`${kind}/${size}`) ?? [];
			rows.push([
				label,
				String(size),
				fmt(m(kind, size, 'ms')),
				kind === 'code' ? '-' : fmt(m(kind, size, 'itemsPerSecond')),
				mib(m(kind, size, 'peakRss')),
				size === large ? signedMib(growth(kind)) : '',
				fmt(outputMiB.get(size), 1),
				runsList(list.map((s) => s.peakRss! / MiB)),
			]);
		}
	}
	// Beyond the output: what the Clinic node's run needs more than the Code node's with the same output.
	const beyondOutput = m('clinic', large, 'peakRss') - m('code', large, 'peakRss');
	const allowance = Math.max(32 * MiB, 0.1 * growth('code'));
	const goals: Goal[] = [
		{
			text: `(3) Event Get Many over ${large} events: memory no more than pages in flight plus the output`,
			met: Number.isFinite(beyondOutput) ? beyondOutput <= allowance && failures.length === 0 : undefined,
			detail:
				`peak RSS ${mib(m('clinic', large, 'peakRss'))} MiB vs ${mib(m('code', large, 'peakRss'))} MiB for the same output from a Code node ` +
				`(${signedMib(beyondOutput)} MiB; allowance ${mib(allowance)} MiB); growth from ${small}: ` +
				`Clinic ${signedMib(growth('clinic'))}, Code ${signedMib(growth('code'))}, HTTP Request ${signedMib(growth('http'))} MiB` +
				(failures.length ? `; WRONG OUTPUT: ${failures.join('; ')}` : ''),
		},
		{
			text: `(3) Event Get Many over ${large} events: wall time vs the HTTP Request node paging itself`,
			met: undefined,
			detail: `${fmt(m('clinic', large, 'ms'))} ms vs ${fmt(m('http', large, 'ms'))} ms (no goal set; for reference)`,
		},
	];
	const markdown = [
		`Simulator seeded with ${small} and then ${large} events (\`sim.seedEvents\`); each node returns all of them, ` +
			`${PAGE_SIZE} per page. Node ms: n8n's executionTime of the node; peak RSS: VmHWM of \`n8n execute\`, which also ` +
			'holds the run data it prints at the end (`--rawOutput`), so the output counts more than once in every row. ' +
			`Medians of ${options.runs} runs after a warm-up. "Output JSON": the Clinic node's items as compact JSON. ` +
			'Every run checked: exactly the seeded events, ids 1..N in order.',
		'',
		table(['Variant', 'events', 'node ms', 'events/s', 'peak RSS MiB', `RSS growth from ${small}, MiB`, 'output JSON MiB', 'peak RSS per run, MiB'], rows),
		'',
		'The Code node row is the reference for "the output alone": the same number of events of the same shape, ' +
			'made without any request. The Clinic node keeps one page in flight, so its peak should match that row.',
	].join('\n');
	return { title: '3. Event Get Many, Return All', markdown, goals };
}
