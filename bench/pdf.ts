/**
 * (4) Invoice Download PDF for 500 seeded signed invoices against 50, with n8n's
 * filesystem binary data mode (set explicitly on 1.x; the default on 2.x): items/s and
 * peak RSS of `n8n execute`. Every run checks that each item carries its file as a
 * reference to the binary data store, not inline.
 */
import type { Bench, Goal, Sample, SectionResult } from './lib/bench';
import { importAll, medianOf, roundLabel } from './lib/bench';
import type { RunItem, WorkflowImport } from './lib/n8n';
import { outputItems, timedExecute } from './lib/n8n';
import { fmt, mib, perSecond, runsList, table } from './lib/stats';
import { MEASURED, clinicCredential, clinicNode, givenIds, itemsThen } from './lib/workflows';

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

function checkFiles(items: RunItem[], ids: number[]): FileCheck {
	let referenced = 0;
	let bytes = 0;
	let ok = items.length === ids.length;
	items.forEach((item, index) => {
		const file = item.binary?.data as { id?: string; data?: string; bytes?: number; fileSize?: string } | undefined;
		if (item.json.invoiceId !== ids[index] || !file) {
			ok = false;
			return;
		}
		if (byReference(file)) referenced++;
		bytes += file.bytes ?? sizeInBytes(file.fileSize);
	});
	return { ok, byReference: referenced, bytes };
}

export async function measurePdf(bench: Bench): Promise<SectionResult> {
	const { sim, options, ctx } = bench;
	const sizes = options.quick ? [20, 100] : [50, 500];
	const rounds = options.runs + 1;
	// n8n 1.x keeps binary data in memory unless told; 2.x uses the filesystem by default.
	const env: Record<string, string> = ctx.major < 2 ? { N8N_DEFAULT_BINARY_DATA_MODE: 'filesystem' } : {};
	sim.reset();
	const ids = sim.seedInvoices(sizes[sizes.length - 1]);

	const credential = clinicCredential(sim, 'bench 4');
	const workflows = new Map<number, WorkflowImport>();
	for (const size of sizes) {
		workflows.set(
			size,
			itemsThen(
				`bench 4: Download PDF x ${size}`,
				size,
				clinicNode(credential, { resource: 'invoice', operation: 'downloadPdf', invoiceId: '={{ $json.id }}', binaryPropertyName: 'data' }),
				{ itemsCode: givenIds(ids.slice(0, size)) },
			),
		);
	}
	bench.log(`[4] importing 1 credential and ${workflows.size} workflows`);
	await importAll(bench, [credential], [...workflows.values()]);

	const samples = new Map<number, Sample[]>();
	const checks = new Map<number, FileCheck>();
	for (let round = 0; round < rounds; round++) {
		for (const size of sizes) {
			const run = await timedExecute(ctx, workflows.get(size)!.id!, MEASURED, { env });
			const check = checkFiles(outputItems(run.node), ids.slice(0, size));
			if (!checks.has(size) || !check.ok || check.byReference < size) checks.set(size, check);
			const sample: Sample = { ms: run.nodeMs, itemsPerSecond: perSecond(size, run.nodeMs), peakRss: run.peakRss };
			bench.log(
				`[4] ${size} PDFs ${roundLabel(round, options.runs)}: ${fmt(sample.ms)} ms, ${fmt(sample.itemsPerSecond)} items/s, ` +
					`RSS ${mib(sample.peakRss)} MiB, ${check.byReference}/${size} by reference`,
			);
			if (round > 0) samples.set(size, [...(samples.get(size) ?? []), sample]);
		}
	}
	sim.reset();

	const [small, large] = sizes;
	const m = (size: number, key: keyof Sample) => medianOf(samples.get(size) ?? [], key);
	const growth = m(large, 'peakRss') - m(small, 'peakRss');
	const fileBytes = (size: number) => checks.get(size)?.bytes ?? Number.NaN;
	const rows = sizes.map((size) => [
		`Clinic node, Invoice Download PDF x ${size}`,
		fmt(m(size, 'itemsPerSecond')),
		fmt(m(size, 'ms')),
		mib(m(size, 'peakRss')),
		size === large ? mib(growth) : '',
		fmt(fileBytes(size) / 1024, 0),
		`${checks.get(size)?.byReference ?? 0}/${size}`,
		runsList((samples.get(size) ?? []).map((s) => s.peakRss! / MiB)),
	]);
	const allFine = sizes.every((size) => checks.get(size)?.ok && checks.get(size)?.byReference === size);
	// "Does not grow with the number of files": within run-to-run noise (16 MiB) of the small run.
	const noise = 16 * MiB;
	const goals: Goal[] = [
		{
			text: `(4) Download PDF: peak RSS does not grow with the number of files (${small} -> ${large}), filesystem mode`,
			met: Number.isFinite(growth) ? growth <= noise && allFine : undefined,
			detail:
				`${mib(m(small, 'peakRss'))} -> ${mib(m(large, 'peakRss'))} MiB (${growth >= 0 ? '+' : ''}${mib(growth)} MiB, noise allowance ${mib(noise)} MiB); ` +
				`${fmt(m(large, 'itemsPerSecond'))} items/s; files by reference: ${allFine ? 'all' : 'NOT ALL'}`,
		},
	];
	const markdown = [
		`Signed invoices seeded with \`sim.seedInvoices(${large})\`; Items -> Clinic node (Invoice, Download PDF, default settings). ` +
			`Binary data mode: ${ctx.major < 2 ? '`N8N_DEFAULT_BINARY_DATA_MODE=filesystem`' : "n8n 2.x's default (filesystem)"}. ` +
			`Medians of ${options.runs} runs after a warm-up. "By reference": items whose binary is an id in n8n's binary data store, with no inline data.`,
		'',
		table(['Variant', 'items/s', 'node ms', 'peak RSS MiB', `RSS growth from ${small}, MiB`, 'file KiB (total)', 'by reference', 'peak RSS per run, MiB'], rows),
		'',
		`The simulator's PDFs are small (about ${fmt(fileBytes(large) / large / 1024, 1)} KiB each), so ${large} files are only ` +
			`${fmt(fileBytes(large) / MiB, 1)} MiB in all: even an in-memory mode would hardly show in RSS. ` +
			'What this run shows is that nothing per item accumulates; a test with large files needs a simulator option for the PDF size.',
	].join('\n');
	return { title: '4. Download PDF with filesystem binary data', markdown, goals };
}
