/**
 * The package on n8n's distributed setup (queue mode): PostgreSQL, Redis, one main, two
 * workers and two webhook processors behind a round-robin balancer, one encryption key,
 * one user folder with the package installed as docs/queue-mode.md tells operators to for an
 * image or a worker (`npm install --prefix ~/.n8n/nodes`: no native module comes with it).
 *
 * - A Clinic Trigger delivery reaches a webhook processor and runs on a worker.
 * - Refresh Token and password credentials: 2 rounds of 20 concurrent executions split
 *   across both workers, each round after every access token was revoked (Doorkeeper:
 *   a refresh revokes the old pair; reusing a used refresh token is refused). Every
 *   execution succeeds, the token requests per round are printed and bounded by one per
 *   process, a later run succeeds, the stored refresh token is the newest live one.
 * - A copy arriving at either webhook processor after the first was answered starts nothing
 *   (the duplicate check reads the service's event log, which every process shares).
 * - A delivery sent to both webhook processors at the same moment: the documented behaviour
 *   (both run; both runs carry the same eventId for Remove Duplicates).
 * - The Event Log Trigger polls on the main and its runs go to the workers, each event once
 *   (its cursor across restarts: eventLogTrigger.test.ts; the poll runs on the main alike).
 * - Two mains started together against one database leave one subscription per event.
 *   (n8n's multi-main mode needs a license it checks at start, so the two mains here are
 *   two plain queue-mode mains, each its own leader: both activate at start-up.)
 */
import { signDelivery, type Simulator } from '../simulator';
import {
	N8N_VERSIONS,
	importedCredentialId,
	nodeJson,
	startN8n,
	getFreePort,
	waitFor,
	type Execution,
	type N8nServer,
	type QueueCluster,
	type WorkflowImport,
} from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { eventLogRuns, eventLogWorkflow, idsPerRun } from './support/eventLog';
import { simulatorCredentials } from './support/examples';
import { acceptedAsNew, runsWithValue, settledRuns, storedRuns } from './support/runs';
import { DEMO_CREDENTIAL, chain, clinicNode, clinicTriggerWorkflow, webhookTrigger } from './support/workflows';

// Round 1 refreshes from the credential's first refresh token, round 2 from the one round 1
// stored: each later round would assert round 2 again.
const ROUNDS = 2;
const PER_ROUND = 20;
const WORKERS = 2;
const REFRESH_CREDENTIAL_ID = 'clinicQueueRefresh1';

function roundsWorkflow(path: string, credential: 'clinicApi' | 'clinicRefreshTokenApi'): WorkflowImport {
	return chain(`Queue rounds (${credential})`, [
		// Answers once the run is queued (as for the service's deliveries); the outcome is
		// read from the stored executions.
		webhookTrigger(path, { webhookId: `${path}-0000-4000-8000-000000000000`, responseMode: 'onReceived' }),
		clinicNode(
			'Get Consultation',
			{ resource: 'consultation', operation: 'get', consultationId: '1' },
			{
				typeVersion: 1,
				credentialType: credential,
				credential: credential === 'clinicApi' ? DEMO_CREDENTIAL : { id: REFRESH_CREDENTIAL_ID, name: 'Clinic Refresh Token (simulator)' },
			},
		),
	]);
}

function patientTriggerWorkflow(): WorkflowImport {
	return clinicTriggerWorkflow({ name: 'Patient updates (queue)', webhookId: '5f0c1d2e-7a8b-4c9d-8e0f-1a2b3c4d5e6f', nodeId: 'queue-patient-trigger' });
}

interface RoundReport {
	round: number;
	ok: number;
	failed: string[];
	perWorker: number[];
	tokenRequests: ReturnType<Simulator['tokenRequestCounts']>;
}

describe.each([N8N_VERSIONS.v2, N8N_VERSIONS.v1])('Queue mode: n8n %s, main + 2 workers + 2 webhook processors', (version) => {
	let sim: Simulator;
	let cluster: QueueCluster;
	let triggerId: string;
	let refreshRoundsId: string;
	let passwordRoundsId: string;
	let eventLogId: string;
	let suiteStarted = 0;
	beforeAll(() => {
		suiteStarted = Date.now();
	});

	const clinic = useClinicN8n({
		version,
		label: 'queue',
		installPackage: 'npm',
		// Latency spreads each round's executions over both workers, as real API calls do.
		simulator: { allowHttpCallbacks: true, deliveryRetryDelayMs: 100, latencyMs: 150 },
		queue: { workers: WORKERS, webhookProcessors: 2, concurrency: 10 },
		credentials: (sim) => [
			...simulatorCredentials(sim),
			{
				id: REFRESH_CREDENTIAL_ID,
				name: 'Clinic Refresh Token (simulator)',
				type: 'clinicRefreshTokenApi',
				data: {
					baseUrl: sim.apiBaseUrl,
					webhookBaseUrl: sim.webhooksBaseUrl,
					topicPrefix: sim.topicPrefix,
					refreshToken: sim.issueRefreshToken(sim.twoFactor.username),
				},
			},
		],
		workflows: () => [
			patientTriggerWorkflow(),
			roundsWorkflow('queue-rounds-refresh', 'clinicRefreshTokenApi'),
			roundsWorkflow('queue-rounds-password', 'clinicApi'),
			eventLogWorkflow(),
		],
	});
	const { n8n } = clinic;
	beforeAll(() => {
		sim = clinic.sim;
		[triggerId, refreshRoundsId, passwordRoundsId, eventLogId] = clinic.workflowIds;
		cluster = clinic.cluster;
	});

	afterAll(() => {
		process.stdout.write(`queue mode ${version}: suite took ${Math.round((Date.now() - suiteStarted) / 1000)} s\n`);
	});

	const live = () => sim.subscriptions().filter((s) => s.deleted_at === null && s.status === 'enabled');
	/** Each test activates what it needs: it may run alone or after any other. */
	const ensureActive = async (...ids: string[]) => {
		for (const id of ids) if (!(await cluster.main.getWorkflow(id)).active) await cluster.main.activateWorkflow(id);
	};
	/** The stored (decrypted) data of a credential, as n8n's CLI exports it. */
	async function storedCredential(id: string): Promise<Record<string, unknown>> {
		const result = await n8n.ctx.runN8n(['export:credentials', `--id=${id}`, '--decrypted'], { logName: 'export-credentials' });
		const match = /\[\s*\{[\s\S]*\}\s*\]/.exec(result.stdout);
		if (!match) throw new Error(`export:credentials printed no credential (exit ${result.exitCode})`);
		const [credential] = JSON.parse(match[0]) as Array<{ data: Record<string, unknown> }>;
		return credential.data;
	}

	async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
		const response = await fetch(url, {
			method: 'POST',
			headers: { 'content-type': 'application/json', ...headers },
			body: typeof body === 'string' ? body : JSON.stringify(body),
			signal: AbortSignal.timeout(120_000),
		});
		return { status: response.status, text: await response.text() };
	}

	/** One more webhook-started run; resolves with its execution once finished. */
	async function runOnce(path: string, workflowId: string): Promise<Execution> {
		const seen = new Set((await cluster.main.listExecutions(workflowId, { includeData: false })).map((e) => e.id));
		const answer = await post(cluster.webhookUrl(path), { later: true });
		expect(answer.status).toBe(200);
		const done = await cluster.main.waitForExecutions(workflowId, seen.size + 1, { timeoutMs: 60_000 });
		return done.find((e) => !seen.has(e.id))!;
	}

	/**
	 * ROUNDS rounds of PER_ROUND concurrent webhook-started executions, each after every
	 * access token was revoked. Prints one line per round; returns the reports.
	 */
	async function runRounds(label: string, path: string, workflowId: string): Promise<RoundReport[]> {
		const reports: RoundReport[] = [];
		for (let round = 1; round <= ROUNDS; round++) {
			sim.revokeAccessTokens();
			sim.clearLog();
			const before = cluster.executionsPerWorker();
			const seen = new Set((await cluster.main.listExecutions(workflowId, { includeData: false })).map((e) => e.id));
			const answers = await Promise.all(
				Array.from({ length: PER_ROUND }, async (_, i) => await post(cluster.webhookUrl(path), { round, i })),
			);
			const refused = answers.filter((a) => a.status !== 200).map((a) => `answered ${a.status} ${a.text.slice(0, 160)}`);
			const done = await cluster.main.waitForExecutions(workflowId, seen.size + PER_ROUND - refused.length, {
				timeoutMs: 120_000,
			});
			const executions = done.filter((e) => !seen.has(e.id));
			const after = cluster.executionsPerWorker();
			const failed = executions
				.filter((e) => e.status !== 'success')
				.map((e) => `execution ${e.id} ${e.status}: ${e.data?.resultData?.error?.message ?? ''}`.slice(0, 240));
			const report: RoundReport = {
				round,
				ok: executions.length - failed.length,
				failed: [...refused, ...failed],
				perWorker: after.map((n, i) => n - before[i]),
				tokenRequests: sim.tokenRequestCounts(),
			};
			reports.push(report);
			process.stdout.write(
				`${version} ${label} round ${round}: ${report.ok}/${PER_ROUND} succeeded; executions per worker ${report.perWorker.join(' + ')}; ` +
					`token requests ${report.tokenRequests.total} (password ${report.tokenRequests.password}, ` +
					`refresh ${report.tokenRequests.refresh_token}, refused reuses ${report.tokenRequests.refused_reuse})\n`,
			);
		}
		return reports;
	}

	function expectRounds(reports: RoundReport[], executions: Execution[]) {
		for (const report of reports) {
			expect({ round: report.round, failed: report.failed }).toEqual({ round: report.round, failed: [] });
			// The goal of the credential design: at most one token request per process per expiry.
			expect({ round: report.round, atMostOnePerWorker: report.tokenRequests.total <= WORKERS }).toEqual({
				round: report.round,
				atMostOnePerWorker: true,
			});
		}
		// Both workers took part (each worker runs at most 10 at once, so 20 need both).
		const total = reports.reduce((sum, r) => sum.map((n, i) => n + r.perWorker[i]), [0, 0]);
		expect(total.every((n) => n > 0)).toBe(true);
		expect(executions.filter((e) => e.status !== 'success').map((e) => `${e.id}: ${e.status}`)).toEqual([]);
	}

	it(
		"a Clinic Trigger workflow's signed delivery reaches a webhook processor and runs on a worker",
		n8n.run(async () => {
			await ensureActive(triggerId);
			const [subscription] = live();
			expect(live()).toHaveLength(1);
			expect(subscription.url.startsWith(`${cluster.balancer.url}/webhook/`)).toBe(true);

			const hitsBefore = cluster.balancer.hits.reduce((a, b) => a + (b ?? 0), 0);
			const record = await sim.emit('patient', 'patient-updated', { id: 2, first_name: 'Luis' });
			expect(record.logs.map((log) => log.response_code)).toEqual([200]);
			expect(cluster.balancer.hits.reduce((a, b) => a + (b ?? 0), 0)).toBe(hitsBefore + 1);

			const { runs } = await settledRuns(sim, cluster.main, triggerId, record.id, runsWithValue('Patient Updated', record.value));
			expect(runs).toHaveLength(1);
			const [execution] = runs;
			expect(execution.status).toBe('success');
			expect(nodeJson(execution, 'Patient Updated')[0]).toMatchObject({ event: 'patient-updated', value: { id: 2 } });
			// Exactly one worker ran it (the processor only queued it).
			const ranOn = cluster.workers.filter((w) => w.log().includes(`Worker started execution ${execution.id} (`));
			expect(ranOn).toHaveLength(1);
		}),
		5 * 60_000,
	);

	it(
		`Refresh Token credential: ${ROUNDS} rounds of ${PER_ROUND} concurrent executions on ${WORKERS} workers after every access token was revoked all succeed; the stored refresh token is the newest live one`,
		n8n.run(async () => {
			await cluster.main.activateWorkflow(refreshRoundsId);
			const reports = await runRounds('Refresh Token credential', 'queue-rounds-refresh', refreshRoundsId);
			const later = await runOnce('queue-rounds-refresh', refreshRoundsId);
			const executions = await cluster.main.listExecutions(refreshRoundsId, { includeData: false });
			const stored = await storedCredential(importedCredentialId(n8n.ctx, REFRESH_CREDENTIAL_ID));
			const storedToken = String(stored.rotatedRefreshToken || stored.refreshToken || '');
			const status = sim.refreshTokenStatus(storedToken);
			process.stdout.write(
				`${version} Refresh Token credential: later run ${later.status}; stored refresh token ` +
					`live ${status.live}, newest of its chain ${status.newest}\n`,
			);

			expectRounds(reports, executions);
			expect(later.status).toBe('success');
			expect(status).toEqual({ known: true, live: true, newest: true, used: false });
		}),
		10 * 60_000,
	);

	it(
		`password credential: ${ROUNDS} rounds of ${PER_ROUND} concurrent executions on ${WORKERS} workers after every access token was revoked all succeed`,
		n8n.run(async () => {
			await cluster.main.activateWorkflow(passwordRoundsId);
			const reports = await runRounds('password credential', 'queue-rounds-password', passwordRoundsId);
			const later = await runOnce('queue-rounds-password', passwordRoundsId);
			const executions = await cluster.main.listExecutions(passwordRoundsId, { includeData: false });

			expectRounds(reports, executions);
			expect(later.status).toBe('success');
		}),
		10 * 60_000,
	);

	it(
		'a copy of a delivery arriving at either webhook processor after the first was answered starts nothing (the event log is shared)',
		n8n.run(async () => {
			await ensureActive(triggerId);
			const [subscription] = live();
			const record = await sim.emit('patient', 'patient-updated', { id: 5, first_name: 'Copy at the other processor' });
			expect(record.logs.map((log) => log.response_code)).toEqual([200]);
			// The same bytes the service sent, sent again to each processor in turn: one of them
			// did not see the first delivery and has nothing of it in memory.
			const body = record.logs[0].request;
			const headers = { signature: signDelivery(subscription.authentication_data.secret, Buffer.from(body)) };
			const path = new URL(subscription.url);
			const at = (processor: number) => `${cluster.webhookProcessors[processor].baseUrl}${path.pathname}${path.search}`;
			const copies = [await post(at(0), body, headers), await post(at(1), body, headers)];
			expect(copies.map((answer) => answer.status)).toEqual([200, 200]);
			expect(acceptedAsNew(copies)).toBe(0);
			const { runs } = await settledRuns(sim, cluster.main, triggerId, record.id, runsWithValue('Patient Updated', record.value));
			expect(runs).toHaveLength(1);
		}),
		5 * 60_000,
	);

	it(
		'a delivery sent to both webhook processors: suppressed per processor, one run per processor, both with the same eventId',
		n8n.run(async () => {
			await ensureActive(triggerId);
			const [subscription] = live();
			// An event in the service's log (not delivered by it), then delivered by hand, as the
			// service does: the body holds its value and nothing else.
			sim.seedEvents(1, 'patient', 'patient-updated');
			const logged = sim.events()[sim.events().length - 1];
			const body = JSON.stringify({ value: logged.value });
			const headers = { signature: signDelivery(subscription.authentication_data.secret, Buffer.from(body)) };
			const path = new URL(subscription.url);
			const at = (processor: number) => `${cluster.webhookProcessors[processor].baseUrl}${path.pathname}${path.search}`;

			// Both processors at once, then each again: every copy is accepted (the service
			// must not retry), the repeat to the same processor starts nothing.
			const first = await Promise.all([post(at(0), body, headers), post(at(1), body, headers)]);
			const again = await Promise.all([post(at(0), body, headers), post(at(1), body, headers)]);
			expect([...first, ...again].map((a) => a.status)).toEqual([200, 200, 200, 200]);

			// Documented behaviour (docs/queue-mode.md, Duplicates): copies at the same moment at
			// two processors may both run (each reads the log before the other's cursor is saved);
			// the runs share the eventId that a Remove Duplicates node keys on.
			const accepted = acceptedAsNew([...first, ...again]);
			expect(accepted).toBeGreaterThanOrEqual(1);
			expect(accepted).toBeLessThanOrEqual(2);
			const copies = await storedRuns(
				cluster.main,
				triggerId,
				(e) => nodeJson(e, 'Patient Updated')[0]?.eventId === logged.id,
				accepted,
			);
			expect(copies).toHaveLength(accepted);
		}),
		5 * 60_000,
	);

	it(
		'the Event Log Trigger polls on the main, its runs go to the workers, and each event is emitted once',
		n8n.run(async () => {
			// Across a restart and downtime the cursor holds as in regular mode: the poll runs on the
			// main either way, and eventLogTrigger.test.ts asserts it ('... across a restart and after
			// downtime'). Here: where the polls and their runs happen.
			const finish = async (count: number): Promise<number[]> => {
				const ids: number[] = [];
				for (let i = 0; i < count; i++) {
					ids.push((await sim.emit('consultation', 'consultation-finished', { id: 700 + sim.events().length })).id);
				}
				return ids;
			};
			const main = cluster.main;
			/**
			 * Waits until the runs together carry as many ids as `ids` (with `nextPoll`, also for
			 * one more poll after them), then compares exactly: a missing, extra or repeated id
			 * fails. A check without `nextPoll` is followed by later polls a later check counts.
			 */
			const waitForIds = async (ids: number[], nextPoll = false): Promise<Execution[]> => {
				const runs = await eventLogRuns(sim, main, eventLogId, ids.length, { nextPoll });
				expect(idsPerRun(runs).flat()).toEqual(ids);
				return runs;
			};

			await finish(2); // before activation: not emitted
			await main.activateWorkflow(eventLogId);
			const first = await finish(3);
			const runs = await waitForIds(first);
			// Polled on the main, run on the workers.
			for (const run of runs) expect(cluster.workerOf(run.id)).toBeGreaterThanOrEqual(0);
			const after = await finish(2);
			await waitForIds([...first, ...after], true);
			await main.deactivateWorkflow(eventLogId);
		}),
		8 * 60_000,
	);

	it(
		'two mains started together against one database leave one subscription per event, and a delivery starts one run',
		n8n.run(async (ctx) => {
			// The trigger workflow active in the database; then no main runs.
			await ensureActive(triggerId);
			await cluster.main.stop();
			// The service lost the subscription (or it was never made): each main's start-up
			// finds none and subscribes.
			const token = await fetch(`${sim.apiBaseUrl}/oauth/token`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ grant_type: 'password', ...sim.demo }),
			}).then(async (r) => ((await r.json()) as { access_token: string }).access_token);
			for (const s of live()) {
				const deleted = await fetch(`${sim.webhooksBaseUrl}/webhooks/${s.id}`, {
					method: 'DELETE',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify({ service_access_token: token }),
				});
				expect(deleted.status).toBe(200);
			}
			expect(live()).toHaveLength(0);
			const madeBefore = sim.subscriptions().length;

			// Both activate their active workflows at start (the publication service off: its
			// outbox would hand the work to one of them).
			const env = { N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'false' };
			const secondPort = await getFreePort();
			// A slow service widens the window between a main's check and its subscribe, so the
			// two start-ups overlap there as they do when the service is busy.
			sim.setLatency(5_000);
			sim.clearLog();
			let mains: N8nServer[] = [];
			try {
				mains = await Promise.all([startN8n(ctx, { env }), startN8n(ctx, { env, port: secondPort })]);
				mains.forEach((main) => n8n.track(main));
				sim.setLatency(150);
				// Both mains have started (their start-up activation done); whatever either sent the
				// webhook service is answered once nothing is in flight there.
				await waitFor(
					'a subscription for patient-updated, and no request of either main still at the service',
					async () => (live().length > 0 && sim.inFlight().now === 0 ? true : undefined),
					{ timeoutMs: 60_000 },
				);
				const calls = sim.log.filter((e) => e.host === 'webhooks').map((e) => `${e.method} ${e.path.replace(/\/\d+$/, '/{id}')} ${e.status}`);
				process.stdout.write(
					`${version} two mains: ${sim.subscriptions().length - madeBefore} subscription(s) made at start-up, ` +
						`${live().length} live; webhook-service calls in order: ${calls.join(', ')}\n`,
				);
				const events = live().map((s) => s.event_name);
				expect(events).toEqual(['patient-updated']);

				const record = await sim.emit('patient', 'patient-updated', { id: 4, first_name: 'Carmen at two mains' });
				expect(record.logs.map((log) => log.response_code)).toEqual([200]);
				const { runs } = await settledRuns(sim, mains[0], triggerId, record.id, runsWithValue('Patient Updated', record.value));
				expect(runs).toHaveLength(1);
			} finally {
				sim.setLatency(150);
				await Promise.all(mains.map(async (main) => await main.stop()));
			}
		}),
		8 * 60_000,
	);
});
