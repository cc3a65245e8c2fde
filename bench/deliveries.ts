/**
 * (5) 2,000 signed deliveries into an active Clinic Trigger against n8n's own Webhook
 * node (POST) on the same running n8n (`n8n start`, all workflows active), sent from the
 * benchmark process over keep-alive connections, 16 in flight, signed as the simulator
 * signs them (HMAC-SHA256 with the secret of the subscription the trigger registered).
 * Accepted deliveries/s is the rate of 2xx answers; on n8n 2.x both nodes are answered
 * once their execution is stored, and the executions run behind, so the time until every
 * execution finished is shown too.
 * Then 200 exact copies of already accepted deliveries: the trigger must start nothing.
 * A bare community trigger (bench/fixtures/bare-trigger: emits the body, nothing else)
 * shows what n8n itself spends on a community trigger's delivery, so the Clinic Trigger's
 * own share of the gap to the Webhook node is known; the same trigger reading its
 * credential once per delivery (as the Clinic Trigger must, for the current signing key)
 * shows what n8n spends on that read, and n8n's own Webhook node with Header Auth (a
 * credential read per request as well) is the peer that checks who sent the request.
 *
 * As the service does, each of the trigger's deliveries is of an event in the event log,
 * logged just before it is sent, on a log of 5,000 earlier events of the kind (listed
 * oldest first, the simulator's default): the trigger's duplicate check reads the end of
 * that log on every delivery.
 *
 * Executions are saved as n8n saves them by default (EXECUTIONS_DATA_SAVE_ON_SUCCESS=all),
 * for both nodes alike, and counted through n8n's executions list by status. n8n runs
 * with a production concurrency limit (see SERVER_ENV): with none, a burst of 2,000
 * answered deliveries starts ~2,000 executions at once.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import type { Bench, Goal, Sample, SectionResult } from './lib/bench';
import { importAll, medianOf, roundLabel } from './lib/bench';
import { executionCounts, settle, type ExecutionCounts } from './lib/executions';
import type { WorkflowImport } from './lib/n8n';
import { newN8nId } from './lib/n8n';
import { RssSampler, currentRss } from './lib/proc';
import { sendAll, type Answer } from './lib/sender';
import { fmt, mib, perSecond, runsList, table } from './lib/stats';
import { CLINIC_TRIGGER_TYPE, clinicCredential, type NodeSpec } from './lib/workflows';
import { startN8n } from '../test/e2e/harness';
import { signDelivery } from '../test/simulator';

const CONCURRENCY = 16;

/**
 * n8n's own setting for bursts of production executions: at most 16 run at once, the
 * rest wait in n8n's queue (deliveries are still answered on receipt). Without it, n8n
 * 2.41 on sqlite started ~1,900 executions at once (5.5 GB RSS) and some died on
 * "Timeout waiting for lock SqliteWriteConnectionMutex", never finishing.
 */
const SERVER_ENV = { N8N_CONCURRENCY_PRODUCTION_LIMIT: '16' };
const EVENT = 'patient:patient-updated';
/** Earlier events of the kind in the event log before the first delivery. */
const LOGGED_BEFORE = 5000;
/**
 * The duplicates repeat the newest accepted deliveries: the duplicate check compares a
 * delivery with the newest 50 logged events of its kind (a retry comes soon after).
 */
const REPEATED_DELIVERIES = 40;
const WEBHOOK_PATH = 'bench-deliveries';
/**
 * n8n is left idle this long before each run: V8 gives memory back a few seconds into an
 * idle period, so each receiver's peak RSS starts from a settled process rather than from
 * whatever the receiver measured before it left behind.
 */
const IDLE_BEFORE_RUN_MS = 20_000;

type Kind = 'trigger' | 'triggerNoCheck' | 'bareCredential' | 'bare' | 'webhookHeaderAuth' | 'webhook';
const KINDS: Kind[] = ['trigger', 'triggerNoCheck', 'bareCredential', 'bare', 'webhookHeaderAuth', 'webhook'];
const LABELS: Record<Kind, string> = {
	trigger: 'Clinic Trigger (signature checked, duplicates dropped)',
	triggerNoCheck: 'Clinic Trigger, Duplicate Check Off (signature checked)',
	bareCredential: 'Bare community trigger that reads its credential (emits the body)',
	bare: 'Bare community trigger (emits the body, nothing else)',
	webhookHeaderAuth: 'Webhook node 2, POST, respond immediately, Header Auth',
	webhook: 'Webhook node 2, POST, respond immediately',
};
const BARE_TRIGGER_TYPE = 'n8n-nodes-bench-bare-trigger.benchBareTrigger';

/** The bare trigger's package (bench/fixtures/bare-trigger), packed for installing. */
function packBareTrigger(destination: string): string {
	const folder = join(__dirname, 'fixtures', 'bare-trigger');
	const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', destination], { cwd: folder, encoding: 'utf8' }).trim().split('\n').pop()!;
	return join(destination, name);
}

function singleNodeWorkflow(name: string, node: NodeSpec): WorkflowImport {
	return {
		id: newN8nId(),
		name,
		nodes: [{ ...node, id: newN8nId(), name: 'Receiver', position: [0, 0], webhookId: randomUUID() }],
		connections: {},
	};
}

const accepted = (answer: Answer) => answer.status >= 200 && answer.status < 300;
const markedDuplicate = (answer: Answer) => (answer.body as { duplicate?: boolean } | undefined)?.duplicate === true;

export async function measureDeliveries(bench: Bench): Promise<SectionResult> {
	const { sim, options, ctx } = bench;
	const count = options.quick ? 300 : 2000;
	const duplicates = options.quick ? 50 : 200;
	// A round is minutes on n8n 2.x (each delivery is a saved execution): at most 3
	// measured rounds, and a warm-up of a tenth of the deliveries.
	const measuredRounds = Math.min(options.runs, 3);
	const rounds = measuredRounds + 1;
	const deliveriesIn = (round: number) => (round === 0 ? Math.ceil(count / 10) : count);
	sim.reset();
	const [suffix, eventName] = EVENT.split(':');
	sim.seedEvents(LOGGED_BEFORE, suffix, eventName);
	const template = sim.events()[0].value as Record<string, unknown>;
	/** The service logs the event it is about to deliver. */
	const logEvent = (body: Buffer) => sim.seedEvents(1, suffix, eventName, () => (JSON.parse(body.toString('utf8')) as { value: unknown }).value);

	const credential = clinicCredential(sim, 'bench 5');
	/** n8n's own Webhook node checking a credential on each request (its Header Auth reads it per request too). */
	const headerAuth = { id: newN8nId(), name: 'bench 5 header auth', type: 'httpHeaderAuth', data: { name: 'x-bench-auth', value: randomUUID() } };
	const workflows: Record<Kind, WorkflowImport> = {
		trigger: singleNodeWorkflow('bench 5: Clinic Trigger', {
			type: CLINIC_TRIGGER_TYPE,
			typeVersion: 1,
			parameters: { authentication: 'clinicApi', events: [EVENT], options: { allowInsecureUrl: true } },
			credentials: { clinicApi: { id: credential.id, name: credential.name } },
		}),
		triggerNoCheck: singleNodeWorkflow('bench 5: Clinic Trigger, no duplicate check', {
			type: CLINIC_TRIGGER_TYPE,
			typeVersion: 1,
			parameters: { authentication: 'clinicApi', events: [EVENT], options: { allowInsecureUrl: true, duplicateCheck: 'off' } },
			credentials: { clinicApi: { id: credential.id, name: credential.name } },
		}),
		bareCredential: singleNodeWorkflow('bench 5: bare community trigger reading its credential', {
			type: BARE_TRIGGER_TYPE,
			typeVersion: 1,
			parameters: { readCredential: true },
			credentials: { clinicApi: { id: credential.id, name: credential.name } },
		}),
		bare: singleNodeWorkflow('bench 5: bare community trigger', { type: BARE_TRIGGER_TYPE, typeVersion: 1, parameters: {} }),
		webhookHeaderAuth: singleNodeWorkflow('bench 5: Webhook with Header Auth', {
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			parameters: { httpMethod: 'POST', path: `${WEBHOOK_PATH}-header-auth`, authentication: 'headerAuth', responseMode: 'onReceived', options: {} },
			credentials: { httpHeaderAuth: { id: headerAuth.id, name: headerAuth.name } },
		}),
		webhook: singleNodeWorkflow('bench 5: Webhook', {
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2,
			parameters: { httpMethod: 'POST', path: WEBHOOK_PATH, responseMode: 'onReceived', options: {} },
		}),
	};
	ctx.installPackage(packBareTrigger(ctx.rootDir));
	await importAll(bench, [credential, headerAuth], Object.values(workflows));

	bench.log('[5] starting n8n');
	const server = await startN8n(ctx, { env: SERVER_ENV });
	try {
		for (const kind of KINDS) await server.activateWorkflow(workflows[kind].id!);
		const subscriptions = sim.subscriptions().filter((s) => s.status === 'enabled' && !s.deleted_at);
		if (subscriptions.length !== 2) throw new Error(`expected 2 live subscriptions, found ${subscriptions.length}`);
		const subscriptionOf = (kind: Kind) => subscriptions.find((s) => s.url.includes(String(workflows[kind].nodes[0].webhookId)))!;
		const urls: Record<Kind, string> = {
			trigger: subscriptionOf('trigger').url,
			triggerNoCheck: subscriptionOf('triggerNoCheck').url,
			// n8n's address for a node with a webhook id: <webhookId>/<path>.
			bareCredential: server.webhookUrl(`${String(workflows.bareCredential.nodes[0].webhookId)}/webhook`),
			bare: server.webhookUrl(`${String(workflows.bare.nodes[0].webhookId)}/webhook`),
			webhookHeaderAuth: server.webhookUrl(`${WEBHOOK_PATH}-header-auth`),
			webhook: server.webhookUrl(WEBHOOK_PATH),
		};
		const secrets: Record<Kind, string> = {
			trigger: subscriptionOf('trigger').authentication_data.secret,
			triggerNoCheck: subscriptionOf('triggerNoCheck').authentication_data.secret,
			bareCredential: subscriptionOf('trigger').authentication_data.secret,
			bare: subscriptionOf('trigger').authentication_data.secret,
			webhookHeaderAuth: subscriptionOf('trigger').authentication_data.secret,
			webhook: subscriptionOf('trigger').authentication_data.secret,
		};
		const headersFor = (kind: Kind) => (body: Buffer) => ({
			'content-type': 'application/json',
			signature: signDelivery(secrets[kind], body),
			...(kind === 'webhookHeaderAuth' ? { 'x-bench-auth': headerAuth.data.value } : {}),
		});
		const bodiesFor = (kind: Kind, round: number) =>
			Array.from({ length: deliveriesIn(round) }, (_, i) =>
				Buffer.from(JSON.stringify({ value: { ...template, updated_at: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(), bench: `${kind}-${round}-${i}` } })),
			);

		const samples: Record<Kind, Sample[]> = { trigger: [], triggerNoCheck: [], bareCredential: [], bare: [], webhookHeaderAuth: [], webhook: [] };
		const problems: string[] = [];
		const finished: Record<Kind, number> = { trigger: 0, triggerNoCheck: 0, bareCredential: 0, bare: 0, webhookHeaderAuth: 0, webhook: 0 };
		const lastBodies: Record<Kind, Buffer[]> = { trigger: [], triggerNoCheck: [], bareCredential: [], bare: [], webhookHeaderAuth: [], webhook: [] };
		for (let round = 0; round < rounds; round++) {
			for (const kind of KINDS) {
				const label = `${kind} ${roundLabel(round, measuredRounds)}`;
				const bodies = bodiesFor(kind, round);
				await new Promise((resolve) => setTimeout(resolve, IDLE_BEFORE_RUN_MS));
				const startRss = currentRss(server.child.pid!);
				const rss = new RssSampler(server.child.pid!);
				const started = Date.now();
				// Only the checking trigger's events go into the log: the variant without the check
				// does not read it, and its events would push the checked ones out of the newest
				// the check compares a repeated delivery with.
				const beforeSend = kind === 'trigger' ? (i: number) => logEvent(bodies[i]) : undefined;
				const sent = await sendAll(urls[kind], bodies, headersFor(kind), CONCURRENCY, beforeSend);
				const ok = sent.answers.filter((a) => accepted(a) && !markedDuplicate(a)).length;
				bench.log(`[5] ${label}: ${ok}/${bodies.length} accepted in ${fmt(sent.ms)} ms (${fmt(perSecond(ok, sent.ms))}/s)`);
				if (ok !== bodies.length) {
					const statuses = [...new Set(sent.answers.map((a) => a.status))].join(',');
					problems.push(`${label}: ${bodies.length - ok} not accepted (answers ${statuses})`);
				}
				const counts = await settle(server, workflows[kind].id!, finished[kind] + ok, 10 * 60_000);
				const doneMs = Date.now() - started;
				const peakRss = rss.stop();
				finished[kind] = counts.success + counts.failed;
				if (!counts.settled) problems.push(`${label}: executions not finished after 10 min (${JSON.stringify(counts)})`);
				if (counts.failed > 0) problems.push(`${label}: ${counts.failed} failed executions so far`);
				const sample: Sample = {
					ms: sent.ms,
					itemsPerSecond: perSecond(ok, sent.ms),
					executedPerSecond: counts.settled ? perSecond(ok, doneMs) : Number.NaN,
					peakRss,
					startRss,
				};
				bench.log(`[5] ${label}: executions ${JSON.stringify(counts)} after ${fmt(doneMs)} ms, n8n RSS ${mib(startRss)} MiB at the start, ${mib(peakRss)} MiB at the peak`);
				if (round > 0) samples[kind].push(sample);
				lastBodies[kind] = bodies;
			}
		}

		// Exact copies of already accepted deliveries (same bytes, same signature).
		const repeats: Record<Kind, { answers: Answer[]; started: number }> = {
			trigger: { answers: [], started: 0 },
			triggerNoCheck: { answers: [], started: 0 },
			bareCredential: { answers: [], started: 0 },
			bare: { answers: [], started: 0 },
			webhookHeaderAuth: { answers: [], started: 0 },
			webhook: { answers: [], started: 0 },
		};
		for (const kind of KINDS) {
			const total = (c: ExecutionCounts) => c.success + c.failed + c.pending;
			const before = total(await executionCounts(server, workflows[kind].id!));
			const repeated = lastBodies[kind].slice(-REPEATED_DELIVERIES);
			const copies = Array.from({ length: duplicates }, (_, i) => repeated[i % repeated.length]);
			const sent = await sendAll(urls[kind], copies, headersFor(kind), CONCURRENCY);
			// Executions run behind the answers: wait for the ones expected, then a little more.
			const expected = sent.answers.filter((a) => accepted(a) && !markedDuplicate(a)).length;
			await settle(server, workflows[kind].id!, before + expected, 5 * 60_000);
			await new Promise((resolve) => setTimeout(resolve, 3_000));
			repeats[kind] = { answers: sent.answers, started: total(await executionCounts(server, workflows[kind].id!)) - before };
			bench.log(`[5] ${kind}: ${duplicates} duplicates -> ${repeats[kind].started} executions`);
		}
		for (const kind of KINDS) await server.deactivateWorkflow(workflows[kind].id!);

		// ---- report
		const m = (kind: Kind, key: keyof Sample) => medianOf(samples[kind], key);
		const rows = KINDS.map((kind) => [
			LABELS[kind],
			fmt(m(kind, 'itemsPerSecond')),
			fmt(m(kind, 'ms')),
			fmt(m(kind, 'executedPerSecond')),
			mib(m(kind, 'startRss')),
			mib(m(kind, 'peakRss')),
			`${repeats[kind].answers.filter(markedDuplicate).length}/${duplicates}`,
			String(repeats[kind].started),
			runsList(samples[kind].map((s) => s.itemsPerSecond)),
		]);
		/** `kind`'s figure over `of`'s: deliveries per second, or with `peakRss`, peak memory. */
		const ratio = (kind: Kind, of: Kind, metric: 'itemsPerSecond' | 'peakRss' = 'itemsPerSecond') => m(kind, metric) / m(of, metric);
		const triggerRatio = ratio('trigger', 'webhook');
		const rssRatio = ratio('trigger', 'webhook', 'peakRss');
		const goals: Goal[] = [
			{
				text: `(5) Clinic Trigger: all ${count} signed deliveries accepted, accepted/s vs the Webhook node`,
				met: !problems.some((p) => p.startsWith('trigger')),
				detail:
					`${fmt(m('trigger', 'itemsPerSecond'))} vs ${fmt(m('webhook', 'itemsPerSecond'))} deliveries/s = ${fmt(triggerRatio, 2)}x` +
					(problems.length ? `; PROBLEMS: ${problems.join('; ')}` : '; every delivery accepted and executed'),
			},
			{
				text: '(5) Clinic Trigger with the duplicate check >= 1.0x the Webhook node, peak RSS <= the Webhook node + 10%',
				met: triggerRatio >= 1 && rssRatio <= 1.1,
				detail:
					`${fmt(triggerRatio, 2)}x deliveries/s, RSS ${fmt(rssRatio, 2)}x; with the check off ${fmt(ratio('triggerNoCheck', 'webhook'), 2)}x. ` +
					`n8n's own share: a bare community trigger that only emits the body does ${fmt(ratio('bare', 'webhook'), 2)}x the Webhook node; ` +
					`against it the Clinic Trigger does ${fmt(ratio('trigger', 'bare'), 2)}x (${fmt(ratio('triggerNoCheck', 'bare'), 2)}x with the check off). ` +
					`The same bare trigger reading its credential once per delivery (as the Clinic Trigger must, for the current signing key) ` +
					`does ${fmt(ratio('bareCredential', 'webhook'), 2)}x the Webhook node; against it the Clinic Trigger does ${fmt(ratio('trigger', 'bareCredential'), 2)}x ` +
					`(${fmt(ratio('triggerNoCheck', 'bareCredential'), 2)}x with the check off), peak RSS ${fmt(ratio('trigger', 'bareCredential', 'peakRss'), 2)}x. ` +
					`n8n's Webhook node with Header Auth (it reads its credential on each request too) does ` +
					`${fmt(ratio('webhookHeaderAuth', 'webhook'), 2)}x the Webhook node; ` +
					`the Clinic Trigger does ${fmt(ratio('trigger', 'webhookHeaderAuth'), 2)}x it`,
			},
			{
				text: `(5) ${duplicates} exact duplicates start no execution`,
				met: repeats.trigger.started === 0 && repeats.trigger.answers.every(accepted),
				detail: `${repeats.trigger.started} executions started, ${repeats.trigger.answers.filter(markedDuplicate).length} answered {duplicate: true}`,
			},
		];
		const markdown = [
			`One \`n8n start\` with the six workflows active (single-node workflows: the receiver only). ${count} deliveries per run ` +
				`(\`{"value": {...patient...}}\`, about ${fmt(bodiesFor('trigger', 0)[0].length)} bytes, each unique), POSTed by the benchmark ` +
				`process on keep-alive connections, ${CONCURRENCY} in flight, header \`signature\` = HMAC-SHA256 of the raw body with the secret ` +
				'of the subscription the trigger registered at the simulator. Accepted/s: 2xx answers per second of sending; ' +
				'executed/s: deliveries per second until n8n reported every execution finished. ' +
				`Medians of ${measuredRounds} runs after a warm-up run of ${deliveriesIn(0)} deliveries (a run takes minutes on n8n 2.x). Peak RSS: highest VmRSS of \`n8n start\` while a run was sent and executed; ` +
				`each run starts after n8n was left idle for ${IDLE_BEFORE_RUN_MS / 1000} s (V8 gives memory back when idle), at the RSS shown. ` +
				`Then ${duplicates} exact copies of the last ${REPEATED_DELIVERIES} accepted deliveries (same bytes, same signature) to each.`,
			'',
			`Each Clinic Trigger delivery is of an event in the simulator's event log, logged just before it is sent (as the service logs ` +
				`an event, then delivers it), on a log that held ${fmt(LOGGED_BEFORE)} earlier events of the kind and grows with each delivery, ` +
				'listed oldest first: the trigger\'s duplicate check (Duplicate Check "Event Log", the default) reads the end of that log on every delivery.',
			'',
			'Executions are saved as n8n saves them by default (`EXECUTIONS_DATA_SAVE_ON_SUCCESS=all`, sqlite) for every receiver, ' +
				'and counted by status through n8n\'s executions list. n8n runs with `N8N_CONCURRENCY_PRODUCTION_LIMIT=16`, ' +
				'its own setting for bursts: every receiver is answered once their execution is stored, before it runs, so without a limit ' +
				'2,000 deliveries start about 2,000 executions at once; a first full run without it reached 5.5 GB RSS and sqlite ' +
				'write-lock timeouts (`Timeout waiting for lock SqliteWriteConnectionMutex`) left executions unfinished for over 10 minutes. ' +
				'With the limit the extra executions wait in n8n\'s queue; the answers are not delayed by it.',
			'',
			table(['Receiver', 'accepted/s', 'send ms', 'executed/s', 'RSS MiB at the start', 'peak RSS MiB', 'duplicates answered as such', 'executions from duplicates', 'accepted/s per run'], rows),
		].join('\n');
		return { title: '5. Signed deliveries: Clinic Trigger vs Webhook node', markdown, goals };
	} finally {
		await server.stop();
	}
}
