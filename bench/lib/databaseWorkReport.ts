/** Section 11's tables, from its figures (bench/databaseWork.ts). */
import type { SectionResult } from './bench';
import { KINDS, type QueryCounts } from './queryLog';
import { LABELS, type Receiver } from './receivers';
import type { StoredExecution } from './sqliteFile';
import { fmt, median, sum, table } from './stats';

/** One window of n8n's query log. */
export interface Window {
	ms: number;
	counts: QueryCounts;
}

export interface ReceiverWork {
	warmUp: Window;
	burst: Window;
	sent: number;
	accepted: number;
	markedDuplicate: number;
	executions: number;
	settledMs: number;
	stored: StoredExecution[];
	staticDataBytes: number;
}

export interface DatabaseWorkFigures {
	version: string;
	burstEvents: number;
	warmUpDeliveries: number;
	nothingSent: Window;
	work: Partial<Record<Receiver, ReceiverWork>>;
	problems: string[];
}

const per = (count: number, of: number) => fmt(of > 0 ? count / of : Number.NaN, 2);

/** "612 (1.02)": a count and the same per delivery. */
const countAndPer = (count: number, of: number) => (count === 0 ? '0' : `${count} (${per(count, of)})`);

function kindsTable(f: DatabaseWorkFigures, measured: Array<[Receiver, ReceiverWork]>): string {
	const rows = measured.map(([receiver, w]) => [
		LABELS[receiver],
		String(w.sent),
		`${w.accepted} (${w.markedDuplicate} as repeats)`,
		String(w.executions),
		fmt(w.settledMs / 1000, 1),
		String(w.burst.counts.total),
		per(w.burst.counts.total, w.sent),
		per(w.burst.counts.total, w.executions),
		...KINDS.map((k) => per(w.burst.counts.byKind[k], w.sent)),
		String(w.burst.counts.failed),
	]);
	const idle = f.nothingSent;
	rows.push([
		`Nothing sent (${fmt(idle.ms / 1000, 0)} s, n8n's background work)`,
		'0',
		'-',
		'-',
		'-',
		String(idle.counts.total),
		'-',
		'-',
		...KINDS.map((k) => String(idle.counts.byKind[k])),
		String(idle.counts.failed),
	]);
	return table(
		['Receiver', 'deliveries', 'accepted', 'executions', 'all finished after s', 'statements', 'per delivery', 'per execution', ...KINDS.map((k) => `${k} per delivery`), 'failed'],
		rows,
	);
}

/** Every statement kind and table of the bursts, totals with per delivery in brackets. */
function targetsTable(f: DatabaseWorkFigures, measured: Array<[Receiver, ReceiverWork]>): string {
	const targets = new Set<string>();
	for (const [, w] of measured) for (const key of w.burst.counts.byTarget.keys()) targets.add(key);
	for (const key of f.nothingSent.counts.byTarget.keys()) targets.add(key);
	const order = (key: string) => KINDS.indexOf(key.split(' ')[0] as (typeof KINDS)[number]);
	const sorted = [...targets].sort((a, b) => order(a) - order(b) || a.localeCompare(b));
	return table(
		['Statement and table', ...measured.map(([r, w]) => `${LABELS[r]}: ${w.sent} deliveries`), `nothing sent, ${fmt(f.nothingSent.ms / 1000, 0)} s`],
		sorted.map((key) => [
			`\`${key}\``,
			...measured.map(([, w]) => countAndPer(w.burst.counts.byTarget.get(key) ?? 0, w.sent)),
			String(f.nothingSent.counts.byTarget.get(key) ?? 0),
		]),
	);
}

function storedTable(measured: Array<[Receiver, ReceiverWork]>): string {
	return table(
		['Receiver', 'executions stored', 'run data bytes per execution (median)', 'run data bytes (mean)', 'workflow bytes per execution (median)', 'run + workflow KiB, all executions', 'static data bytes of the workflow after'],
		measured.map(([receiver, w]) => {
			const data = w.stored.map((e) => e.dataBytes);
			const workflow = w.stored.map((e) => e.workflowBytes);
			return [
				LABELS[receiver],
				String(w.stored.length),
				fmt(median(data)),
				fmt(data.length ? sum(data) / data.length : Number.NaN),
				fmt(median(workflow)),
				fmt((sum(data) + sum(workflow)) / 1024),
				String(w.staticDataBytes),
			];
		}),
	);
}

function warmUpTable(measured: Array<[Receiver, ReceiverWork]>): string {
	return table(
		['Receiver', 'statements', 'by statement and table'],
		measured.map(([receiver, w]) => [
			LABELS[receiver],
			String(w.warmUp.counts.total),
			[...w.warmUp.counts.byTarget].sort((a, b) => b[1] - a[1]).map(([key, n]) => `\`${key}\` ${n}`).join(', '),
		]),
	);
}

export function databaseWorkReport(f: DatabaseWorkFigures): SectionResult {
	const measured = (Object.entries(f.work) as Array<[Receiver, ReceiverWork]>).filter(([, w]) => w !== undefined);
	const markdown = [
		`One \`n8n start\` (n8n ${f.version}, SQLite, \`N8N_CONCURRENCY_PRODUCTION_LIMIT=16\` as in section 5) with n8n's own query log on ` +
			'(`DB_LOGGING_ENABLED=true`, `DB_LOGGING_OPTIONS=all`), every receiver\'s workflow active. Per receiver in turn: ' +
			`a warm-up of ${f.warmUpDeliveries} distinct deliveries one after the other, 15 s idle, then the burst: ${f.burstEvents} events, ` +
			`each delivered twice, all ${f.burstEvents * 2} deliveries at once (the Clinic Trigger's events logged in the simulator before any is sent). ` +
			'Statements are those n8n logged from the first send until every execution the burst started had finished, plus 3 s; ' +
			'executions are counted and their stored bytes measured in the SQLite file from outside n8n, so the benchmark\'s own ' +
			'questions are not among the statements. Whatever else n8n does meanwhile is counted too: the last row of the first ' +
			'table is a window with nothing sent.',
		'',
		kindsTable(f, measured),
		'',
		'Statements of the bursts by kind and table (an UPDATE with the columns it sets), total and per delivery sent:',
		'',
		targetsTable(f, measured),
		'',
		'Stored per execution (`execution_data`: `data` is the run data, `workflowData` the workflow as it ran), and the workflow\'s static data after the burst:',
		'',
		storedTable(measured),
		'',
		`The warm-ups (${f.warmUpDeliveries} deliveries each, before the bursts; the Clinic credential was imported without a token):`,
		'',
		warmUpTable(measured),
		...(f.problems.length ? ['', 'Problems:', '', ...f.problems.map((p) => `- ${p}`)] : []),
	].join('\n');
	return {
		title: `11. Database work of a burst: Clinic Trigger vs Webhook node (n8n ${f.version})`,
		markdown,
		goals: [],
	};
}
