/** Section 5's tables and goals, from its figures (bench/deliveries.ts). */
import type { Goal, Sample, SectionResult } from './bench';
import { IDLE_BEFORE_RUN_S } from './deliveryRuns';
import { LABELS, RECEIVERS, type Receiver } from './receivers';
import { fmt, mib, runsList, table } from './stats';

export interface DeliveryFigures {
	count: number;
	duplicates: number;
	measuredRounds: number;
	warmUp: number;
	concurrency: number;
	burstEvents: number;
	bodyBytes: number;
	steady: Partial<Record<Receiver, Sample[]>>;
	/** Per experimental setting: the steady stream of the receivers measured under it. */
	flags: Record<string, Partial<Record<Receiver, Sample[]>>>;
	burst: Partial<Record<Receiver, { sample: Sample; executions: number }>>;
	/** Per experimental setting: the burst into the receivers measured under it. */
	flagBursts: Record<string, Partial<Record<Receiver, { sample: Sample; executions: number }>>>;
	repeats: { started: number; marked: number; allAccepted: boolean };
	/** The do-it-yourself workflow: deliveries of the steady stream, how many passed its checks; of the burst, how many passed. */
	diy: { sent: number; passed: number; burstPassed: number };
	/** What went wrong in a run, by the receiver it went wrong for. */
	problems: Array<{ receiver: Receiver; text: string }>;
}

type Median = (samples: Sample[], key: keyof Sample) => number;

type BurstFigures = { sample: Sample; executions: number };

function burstRow(label: string, b: BurstFigures | undefined, webhookRss: number): string[] {
	return [
		label,
		String(b?.executions ?? '-'),
		fmt((b?.sample.settleMs ?? Number.NaN) / 1000, 1),
		mib(b?.sample.startRss),
		mib(b?.sample.peakRss),
		fmt((b?.sample.peakRss ?? Number.NaN) / webhookRss, 2) + 'x',
	];
}

const BURST_TABLE_HEADER = ['Receiver', 'executions', 'all finished after s', 'RSS MiB at the start', 'peak RSS MiB', 'peak RSS vs the Webhook node in the same setting'];

/** The burst goal: a few executions of many events (at most one per ten), peak RSS at most the Webhook node's in the same setting. */
function burstGoal(section: number, f: DeliveryFigures): Goal {
	const rss = (r: Receiver) => f.burst[r]?.sample.peakRss ?? Number.NaN;
	const executions = f.burst.trigger?.executions ?? Number.NaN;
	return {
		text: `(${section}) burst: ${f.burstEvents} events in at most ${f.burstEvents / 10} executions, peak RSS <= the Webhook node's`,
		met: executions >= 1 && executions <= f.burstEvents / 10 && rss('trigger') / rss('webhook') <= 1,
		detail:
			`${executions} executions for ${f.burstEvents} events; peak RSS ${mib(rss('trigger'))} MiB against ` +
			`${mib(rss('webhook'))} MiB = ${fmt(rss('trigger') / rss('webhook'), 2)}x; the bare community trigger ` +
			`${mib(rss('bare'))} MiB = ${fmt(rss('bare') / rss('webhook'), 2)}x (what n8n costs any community trigger)`,
	};
}

const BURST_TEXT = (f: DeliveryFigures) =>
	`Burst: ${f.burstEvents} events, each sent twice, all ${f.burstEvents * 2} deliveries at once (the Clinic Trigger's events logged ` +
	'before any is sent, as after an outage). Executions: all the burst started; seconds until every one finished; peak RSS of ' +
	'`n8n start` meanwhile, each receiver on a freshly started n8n. The Webhook node runs every copy';

/** Section 10: the burst with n8n's defaults. */
export function burstAtDefaultsReport(f: DeliveryFigures, version: string): SectionResult {
	const webhookRss = f.burst.webhook?.sample.peakRss ?? Number.NaN;
	const rows = (Object.keys(f.burst) as Receiver[]).map((r) => burstRow(LABELS[r], f.burst[r], webhookRss));
	const markdown = [
		`${BURST_TEXT(f)}. n8n as installed: no \`N8N_CONCURRENCY_PRODUCTION_LIMIT\` (section 5 sets 16), so every accepted ` +
			"delivery's execution starts at once, each with its own expression isolate (n8n 2.x's Webhook node included); with a " +
			'limit, a delivery to a community trigger keeps its webhook-phase isolate until its execution may start (section 5).',
		'',
		table(BURST_TABLE_HEADER, rows),
	].join('\n');
	const problems = f.problems.map((p) => `${p.receiver}: ${p.text}`);
	const goals: Goal[] = [
		burstGoal(10, f),
		{ text: '(10) every burst delivery accepted and executed', met: problems.length === 0, detail: problems.length ? `PROBLEMS: ${problems.join('; ')}` : 'all' },
	];
	return { title: `10. A burst of repeated deliveries with n8n's defaults (n8n ${version})`, markdown, goals };
}

export function deliveriesReport(f: DeliveryFigures, version: string, median: Median): SectionResult {
	const major = Number(version.split('.')[0]);
	const m = (samples: Sample[] | undefined, key: keyof Sample) => (samples?.length ? median(samples, key) : Number.NaN);
	const rate = (receiver: Receiver) => m(f.steady[receiver], 'itemsPerSecond');
	const over = (a: Receiver, b: Receiver) => rate(a) / rate(b);
	const steadyRow = (label: string, samples: Sample[] | undefined, vsHeaderAuth: number) => [
		label,
		fmt(m(samples, 'itemsPerSecond')),
		fmt(vsHeaderAuth, 2) + 'x',
		fmt(m(samples, 'executedPerSecond')),
		mib(m(samples, 'startRss')),
		mib(m(samples, 'peakRss')),
		runsList((samples ?? []).map((s) => s.itemsPerSecond)),
	];
	const steadyRows = RECEIVERS.map((r) => steadyRow(LABELS[r], f.steady[r], over(r, 'webhookHeaderAuth')));
	const flagRows = Object.entries(f.flags).flatMap(([flag, samples]) =>
		(Object.keys(samples) as Receiver[]).map((r) =>
			steadyRow(`${LABELS[r]}, ${flag}`, samples[r], m(samples[r], 'itemsPerSecond') / m(samples.webhookHeaderAuth, 'itemsPerSecond')),
		),
	);
	const burstRows = [
		...(Object.keys(f.burst) as Receiver[]).map((r) => burstRow(LABELS[r], f.burst[r], f.burst.webhook?.sample.peakRss ?? Number.NaN)),
		...Object.entries(f.flagBursts).flatMap(([flag, bursts]) =>
			(Object.keys(bursts) as Receiver[]).map((r) => burstRow(`${LABELS[r]}, ${flag}`, bursts[r], bursts.webhook?.sample.peakRss ?? Number.NaN)),
		),
	];

	const peer: Receiver = major >= 2 ? 'webhookHeaderAuth' : 'webhook';
	const ownProblems = f.problems.filter((p) => p.receiver === 'trigger').map((p) => p.text);
	const peerProblems = f.problems.filter((p) => p.receiver !== 'trigger').map((p) => p.text);
	const goals: Goal[] = [
		{
			text: `(5) every delivery to the Clinic Trigger accepted and executed (${f.count} per run, and the burst)`,
			met: ownProblems.length === 0,
			detail:
				(ownProblems.length ? `PROBLEMS: ${ownProblems.join('; ')}` : 'every delivery accepted, every execution finished') +
				(peerProblems.length ? `; the peers: ${peerProblems.join('; ')}` : ''),
		},
		{
			text: `(5) Clinic Trigger >= 1.0x ${LABELS[peer]} (deliveries/s, steady stream)`,
			met: over('trigger', peer) >= 1,
			detail:
				`${fmt(rate('trigger'))} vs ${fmt(rate(peer))} deliveries/s = ${fmt(over('trigger', peer), 2)}x; ` +
				`against the Webhook node ${fmt(over('trigger', 'webhook'), 2)}x, the bare community trigger ${fmt(over('trigger', 'bare'), 2)}x`,
		},
		{
			text: '(5) Clinic Trigger >= 1.5x the do-it-yourself workflow (deliveries/s, steady stream)',
			met: over('trigger', 'diy') >= 1.5,
			detail:
				`${fmt(rate('trigger'))} vs ${fmt(rate('diy'))} deliveries/s = ${fmt(over('trigger', 'diy'), 2)}x; the bare community trigger ` +
				`${fmt(over('bare', 'diy'), 2)}x` +
				Object.entries(f.flags)
					.map(([flag, samples]) => `; with ${flag}: ${fmt(m(samples.trigger, 'itemsPerSecond') / m(samples.diy, 'itemsPerSecond'), 2)}x`)
					.join(''),
		},
		{
			text: `(5) ${f.duplicates} exact repeats start no execution`,
			met: f.repeats.started === 0 && f.repeats.allAccepted,
			detail: `${f.repeats.started} executions started, ${f.repeats.marked} answered {duplicate: true}`,
		},
		burstGoal(5, f),
	];
	const markdown = [
		`One \`n8n start\` with every receiver's workflow active. Steady stream: ${f.count} deliveries per run ` +
			`(\`{"value": {...patient...}}\`, about ${fmt(f.bodyBytes)} bytes, each unique), POSTed by the benchmark process on keep-alive ` +
			`connections, ${f.concurrency} in flight, header \`signature\` = HMAC-SHA256 of the raw body with the subscription's secret. ` +
			`Accepted/s: 2xx answers per second of sending; executed/s: deliveries per second until n8n reported every execution finished. ` +
			`Medians of ${f.measuredRounds} run(s) after a warm-up run of ${f.warmUp} deliveries; each run starts after n8n was idle ` +
			`${IDLE_BEFORE_RUN_S} s (V8 gives memory back when idle), at the RSS shown. Each Clinic Trigger delivery is of an event ` +
			'logged in the simulator\'s event log just before it is sent, on a log of 5,000 earlier events of the kind: the duplicate ' +
			'check (the default, Event Log) reads its end. Executions are saved as n8n saves them by default (sqlite), with ' +
			'`N8N_CONCURRENCY_PRODUCTION_LIMIT=16` (n8n\'s own setting for bursts: the rest wait in its queue).',
		'',
		table(['Receiver', 'accepted/s', 'vs Header Auth', 'executed/s', 'RSS MiB at the start', 'peak RSS MiB', 'accepted/s per run'], [...steadyRows, ...flagRows]),
		'',
		'Rows with a setting named: n8n restarted with it. `N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE` (n8n 2.x only) is listed under ' +
			'"Experimental" in the README of n8n\'s expression runtime; n8n warns that the legacy engine "is no longer considered ' +
			'secure, and will be removed". ' +
			`Repeats: ${f.duplicates} exact copies of the last accepted deliveries to the Clinic Trigger: ` +
			`${f.repeats.started} executions, ${f.repeats.marked} answered \`{duplicate: true}\`.`,
		'',
		`${BURST_TEXT(f)}; the do-it-yourself workflow starts an execution for every copy ` +
			`and its Remove Duplicates node is to stop the second inside it: it let ${f.diy.burstPassed} of the ${f.burstEvents * 2} through ` +
			`(in the steady stream, ${f.diy.passed} of ${f.diy.sent} unique deliveries passed its signature check and Remove Duplicates).`,
		'',
		table(BURST_TABLE_HEADER, burstRows),
	].join('\n');
	return { title: `5. Signed deliveries: Clinic Trigger vs Webhook node (n8n ${version})`, markdown, goals };
}
