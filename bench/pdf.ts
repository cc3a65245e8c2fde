/**
 * (4) Invoice Download PDF for 500 seeded signed invoices against 50, with n8n's
 * filesystem binary data mode (set explicitly on 1.x; the default on 2.x): items/s and
 * peak RSS of `n8n execute`, next to the HTTP Request node downloading the same files and
 * to n8n alone (No Operation) with as many items. Every run checks that each item carries
 * its file as a reference to the binary data store, not inline.
 */
import type { Bench, Goal, Sample, SectionResult } from './lib/bench';
import { importAll, medianOf, roundLabel } from './lib/bench';
import type { RunItem, WorkflowImport } from './lib/n8n';
import { outputItems, timedExecute } from './lib/n8n';
import { fmt, mib, perSecond, runsList, signedMib, table } from './lib/stats';
import { fetchAccessToken } from './lib/sim';
import { MEASURED, NO_OP_NODE, clinicCredential, clinicNode, givenIds, itemsThen, type NodeSpec } from './lib/workflows';

const MiB = 1024 * 1024;

interface FileCheck {
	ok: boolean;
	/** Files kept by reference (binary data id, no inline data). */
	byReference: number;
	bytes: number;
}

/** n8n's pretty file size ("1.08 kB", "950 B") in bytes, for versions without `bytes`. */
function sizeInBytes(pretty: string | undefined): number {
	const match = /^([\d.]+)\s*(B|kB|MB)$/i.exec(pretty ?? '');
	if (!match) return 0;
	return Number(match[1]) * ({ b: 1, kb: 1000, mb: 1000 * 1000 } as Record<string, number>)[match[2].toLowerCase()];
}

/** A binary kept in n8n's store: an id, and in `data` at most the store's marker (no base64). */
function byReference(file: { id?: string; data?: string }): boolean {
	return Boolean(file.id) && (!file.data || file.data === file.id!.split(':')[0]);
}

/** Every item has its file (and, when `ids` are given, the invoice id in order). */
function checkFiles(items: RunItem[], ids: number[] | undefined, count: number): FileCheck {
	let referenced = 0;
	let bytes = 0;
	let ok = items.length === count;
	items.forEach((item, index) => {
		const file = item.binary?.data as { id?: string; data?: string; bytes?: number; fileSize?: string } | undefined;
		if ((ids && item.json.invoiceId !== ids[index]) || !file) {
			ok = false;
			return;
		}
		if (byReference(file)) referenced++;
		bytes += file.bytes ?? sizeInBytes(file.fileSize);
	});
	return { ok, byReference: referenced, bytes };
}

type Kind = 'clinic' | 'http' | 'baseline';
const KINDS: Array<{ kind: Kind; label: string }> = [
	{ kind: 'clinic', label: 'Clinic node, Invoice Download PDF' },
	{ kind: 'http', label: 'HTTP Request 4.2, same URL, response as file' },
	{ kind: 'baseline', label: 'baseline: Items -> No Operation (no download)' },
];

export async function measurePdf(bench: Bench): Promise<SectionResult> {
	const { sim, options, ctx } = bench;
	const sizes = options.quick ? [20, 100] : [50, 500];
	const [small, large] = sizes;
	const rounds = options.runs + 1;
	// n8n 1.x keeps binary data in memory unless told; 2.x uses the filesystem by default.
	const env: Record<string, string> = ctx.major < 2 ? { N8N_DEFAULT_BINARY_DATA_MODE: 'filesystem' } : {};
	sim.reset();
	const ids = sim.seedInvoices(large);
	const bearer = await fetchAccessToken(sim);

	const credential = clinicCredential(sim, 'bench 4');
	const nodes: Record<Kind, NodeSpec> = {
		clinic: clinicNode(credential, { resource: 'invoice', operation: 'downloadPdf', invoiceId: '={{ $json.id }}', binaryPropertyName: 'data' }),
		// The service takes the token of a CFDI download in the query string only.
		http: {
			type: 'n8n-nodes-base.httpRequest',
			typeVersion: 4.2,
			parameters: {
				url: `=${sim.apiBaseUrl}/invoices/{{ $json.id }}/download_cfdi.pdf?token=${bearer}`,
				options: { response: { response: { responseFormat: 'file', outputPropertyName: 'data' } } },
			},
		},
		baseline: NO_OP_NODE,
	};
	const workflows = new Map<string, WorkflowImport>(); // `${kind}/${size}`
	for (const { kind, label } of KINDS) {
		for (const size of sizes) {
			workflows.set(`${kind}/${size}`, itemsThen(`bench 4: ${label} x ${size}`, size, nodes[kind], { itemsCode: givenIds(ids.slice(0, size)) }));
		}
	}
	bench.log(`[4] importing 1 credential and ${workflows.size} workflows`);
	await importAll(bench, [credential], [...workflows.values()]);

	const samples = new Map<string, Sample[]>();
	const checks = new Map<string, FileCheck>();
	for (let round = 0; round < rounds; round++) {
		for (const { kind } of KINDS) {
			for (const size of sizes) {
				const key = `${kind}/${size}`;
				const run = await timedExecute(ctx, workflows.get(key)!.id!, MEASURED, { env });
				const sample: Sample = { ms: run.nodeMs, itemsPerSecond: perSecond(size, run.nodeMs), peakRss: run.peakRss };
				let files = '';
				if (kind !== 'baseline') {
					const check = checkFiles(outputItems(run.node), kind === 'clinic' ? ids.slice(0, size) : undefined, size);
					if (!checks.has(key) || !check.ok || check.byReference < size) checks.set(key, check);
					files = `, ${check.byReference}/${size} by reference`;
				}
				bench.log(
					`[4] ${kind} x ${size} ${roundLabel(round, options.runs)}: ${fmt(sample.ms)} ms, ${fmt(sample.itemsPerSecond)} items/s, ` +
						`RSS ${mib(sample.peakRss)} MiB${files}`,
				);
				if (round > 0) samples.set(key, [...(samples.get(key) ?? []), sample]);
			}
		}
	}
	sim.reset();

	const m = (kind: Kind, size: number, key: keyof Sample) => medianOf(samples.get(`${kind}/${size}`) ?? [], key);
	const growth = (kind: Kind) => m(kind, large, 'peakRss') - m(kind, small, 'peakRss');
	const fileBytes = (size: number) => checks.get(`clinic/${size}`)?.bytes ?? Number.NaN;
	const rows: string[][] = [];
	for (const { kind, label } of KINDS) {
		for (const size of sizes) {
			const check = checks.get(`${kind}/${size}`);
			rows.push([
				`${label} x ${size}`,
				kind === 'baseline' ? '-' : fmt(m(kind, size, 'itemsPerSecond')),
				fmt(m(kind, size, 'ms')),
				mib(m(kind, size, 'peakRss')),
				size === large ? signedMib(growth(kind)) : '',
				kind === 'baseline' ? '' : `${check?.byReference ?? 0}/${size}`,
				runsList((samples.get(`${kind}/${size}`) ?? []).map((s) => s.peakRss! / MiB)),
			]);
		}
	}
	const allFine = KINDS.filter((k) => k.kind !== 'baseline').every(({ kind }) =>
		sizes.every((size) => checks.get(`${kind}/${size}`)?.ok && checks.get(`${kind}/${size}`)?.byReference === size),
	);
	// "Does not grow with the number of files": within run-to-run noise (16 MiB) of the small run.
	const noise = 16 * MiB;
	const goals: Goal[] = [
		{
			text: `(4) Download PDF: peak RSS does not grow with the number of files (${small} -> ${large}), filesystem mode`,
			met: Number.isFinite(growth('clinic')) ? growth('clinic') <= noise && allFine : undefined,
			detail:
				`${mib(m('clinic', small, 'peakRss'))} -> ${mib(m('clinic', large, 'peakRss'))} MiB (${signedMib(growth('clinic'))} MiB, allowance ${mib(noise)}); ` +
				`HTTP Request node downloading the same files: ${signedMib(growth('http'))} MiB; n8n alone (No Operation): ${signedMib(growth('baseline'))} MiB; ` +
				`${fmt(m('clinic', large, 'itemsPerSecond'))} vs ${fmt(m('http', large, 'itemsPerSecond'))} items/s; files by reference: ${allFine ? 'all' : 'NOT ALL'}`,
		},
	];
	const markdown = [
		`Signed invoices seeded with \`sim.seedInvoices(${large})\`; Items -> the node, default settings. ` +
			`Binary data mode: ${ctx.major < 2 ? '`N8N_DEFAULT_BINARY_DATA_MODE=filesystem`' : "n8n 2.x's default (filesystem)"}. ` +
			`Medians of ${options.runs} runs after a warm-up. "By reference": items whose binary is an id in n8n's binary data store, with no inline data. ` +
			'The HTTP Request node fetches the same URL with the token in the query string (the only place the service takes it for CFDI downloads).',
		'',
		table(['Variant', 'items/s', 'node ms', 'peak RSS MiB', `RSS growth from ${small}, MiB`, 'by reference', 'peak RSS per run, MiB'], rows),
		'',
		`The simulator's PDFs are small (about ${fmt(fileBytes(large) / large / 1024, 1)} KiB each, ${fmt(fileBytes(large) / MiB, 1)} MiB for ${large}): ` +
			'growth here comes from per-item and per-request costs, not from file bytes held in memory. ' +
			'A test with large files needs a simulator option for the PDF size.',
	].join('\n');
	return { title: '4. Download PDF with filesystem binary data', markdown, goals };
}
