/**
 * n8n's queue mode as users run it: PostgreSQL, Redis, one `n8n start` (main: editor,
 * API, activation), `n8n worker` processes (run the executions) and `n8n webhook`
 * processors (serve /webhook/*), one encryption key, one user folder holding the
 * community package. A round-robin balancer stands in front of the webhook processors
 * (as a load balancer does in production): WEBHOOK_URL points at it, so the URLs n8n
 * registers (e.g. the Clinic Trigger's subscriptions) reach the processors in turn.
 *
 *   const n8n = useN8nContext({ version }, async (ctx) => {
 *     ctx.installPackage(packRepository(ctx.rootDir));
 *     await enableQueueMode(ctx);                  // Postgres + Redis + env
 *     cluster = await startQueueCluster(ctx);        // main + 2 workers + 2 webhook processors
 *     await restImportCredentials(cluster.main, ...); // into Postgres, which all of them read
 *   });
 */
import type { ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { N8nHarnessError, type N8nContext } from './context';
import { getFreePort } from './env';
import { LoggedProcess } from './processes';
import { answersStatus, startN8n, type N8nServer } from './server';
import { fatal, waitFor } from './waitFor';
import { startQueueServices, type QueueServices } from './services';

/** A running `n8n worker` or `n8n webhook`. */
export class N8nProcess extends LoggedProcess {
	constructor(
		readonly kind: 'worker' | 'webhook',
		readonly index: number,
		child: ChildProcess,
		logFile: string,
		/** Webhook processors: their own HTTP origin. */
		readonly baseUrl?: string,
	) {
		super(child, logFile);
	}
}

/**
 * Round-robin HTTP balancer in front of the webhook processors; counts what each got.
 * Test webhooks (/webhook-test/) go to the main, where n8n registers them, as n8n's
 * queue-mode docs ask of a load balancer.
 */
export class WebhookBalancer {
	readonly hits: number[];
	private next = 0;

	private constructor(
		private readonly server: Server,
		readonly port: number,
	) {
		this.hits = [];
	}

	get url(): string {
		return `http://127.0.0.1:${this.port}`;
	}

	static async start(port: number, backends: () => string[], mainUrl: string): Promise<WebhookBalancer> {
		let balancer: WebhookBalancer | undefined;
		const server = createServer((req, res) => {
			const targets = backends();
			let base = mainUrl;
			if (!(req.url ?? '').startsWith('/webhook-test/')) {
				if (targets.length === 0) {
					res.writeHead(502).end('no webhook processor');
					return;
				}
				const index = balancer!.next++ % targets.length;
				balancer!.hits[index] = (balancer!.hits[index] ?? 0) + 1;
				base = targets[index];
			}
			const target = new URL(req.url ?? '/', base);
			const upstream = httpRequest(
				target,
				{ method: req.method, headers: { ...req.headers, host: target.host } },
				(answer) => {
					res.writeHead(answer.statusCode ?? 502, answer.headers);
					answer.pipe(res);
				},
			);
			upstream.on('error', () => {
				if (!res.headersSent) res.writeHead(502);
				res.end();
			});
			req.pipe(upstream);
		});
		server.keepAliveTimeout = 5_000;
		await new Promise<void>((resolve, reject) => {
			server.once('error', reject);
			server.listen(port, '127.0.0.1', () => resolve());
		});
		balancer = new WebhookBalancer(server, (server.address() as AddressInfo).port);
		return balancer;
	}

	async close(): Promise<void> {
		await new Promise<void>((resolve) => {
			this.server.close(() => resolve());
			this.server.closeAllConnections();
		});
	}
}

/**
 * Switches a context to queue mode: starts (or takes, see services.ts) PostgreSQL and
 * Redis, a webhook balancer on a free port, and sets the environment of every n8n
 * process started afterwards. Run it before the first n8n command of the context.
 */
export async function enableQueueMode(ctx: N8nContext): Promise<{ services: QueueServices; balancer: WebhookBalancer }> {
	const services = await startQueueServices({ n8nDir: ctx.install.dir, logDir: ctx.logDir });
	ctx.onDispose(async () => await services.stop());
	const webhookProcessors: string[] = [];
	const balancer = await WebhookBalancer.start(await getFreePort(), () => webhookProcessors, `http://127.0.0.1:${ctx.port}`);
	ctx.onDispose(async () => await balancer.close());
	queueState.set(ctx, { services, balancer, webhookProcessors });
	ctx.addEnv({
		...services.n8nEnv(),
		WEBHOOK_URL: `${balancer.url}/`,
		// Production webhooks are the webhook processors' job (as behind a load balancer).
		N8N_DISABLE_PRODUCTION_MAIN_PROCESS: 'true',
	});
	return { services, balancer };
}

const queueState = new WeakMap<
	N8nContext,
	{ services: QueueServices; balancer: WebhookBalancer; webhookProcessors: string[] }
>();

function stateOf(ctx: N8nContext) {
	const state = queueState.get(ctx);
	if (!state) throw new N8nHarnessError('queue mode is not enabled on this context (call enableQueueMode first)');
	return state;
}

async function waitReady(ctx: N8nContext, process: N8nProcess, line: RegExp, timeoutMs: number): Promise<void> {
	await waitFor(
		`n8n ${process.kind} ${process.index} (pid ${process.pid}) to be ready`,
		async () => {
			if (!process.running) {
				throw fatal(
					new N8nHarnessError(`n8n ${process.kind} ${process.index} exited while starting`, process.logTail(80)),
				);
			}
			if (!line.test(process.log())) return undefined;
			if (!process.baseUrl) return true;
			return await answersStatus(process.baseUrl);
		},
		{ timeoutMs, intervalMs: 250, onTimeout: () => process.logTail(80) },
	);
}

/** Starts one `n8n worker` (`--concurrency`, n8n's minimum is 5). */
export async function startWorker(ctx: N8nContext, index: number, concurrency = 10): Promise<N8nProcess> {
	stateOf(ctx);
	const { child, logFile } = await ctx.spawnN8n(['worker', `--concurrency=${concurrency}`], {
		logName: `worker-${index}`,
	});
	const worker = new N8nProcess('worker', index, child, logFile);
	await waitReady(ctx, worker, /n8n worker is now ready/, 3 * 60_000);
	return worker;
}

/** Starts one `n8n webhook` processor on its own port and puts it behind the balancer. */
export async function startWebhookProcessor(ctx: N8nContext, index: number): Promise<N8nProcess> {
	const state = stateOf(ctx);
	const port = await getFreePort();
	const { child, logFile } = await ctx.spawnN8n(['webhook'], {
		logName: `webhook-${index}`,
		env: { N8N_PORT: String(port) },
	});
	const processor = new N8nProcess('webhook', index, child, logFile, `http://127.0.0.1:${port}`);
	await waitReady(ctx, processor, /Webhook listener waiting for requests/, 3 * 60_000);
	state.webhookProcessors[index] = processor.baseUrl!;
	return processor;
}

export interface QueueClusterOptions {
	workers?: number;
	webhookProcessors?: number;
	/** Jobs each worker runs at once (default 10). */
	concurrency?: number;
}

/** Main, workers and webhook processors of one queue-mode context. */
export class QueueCluster {
	constructor(
		readonly ctx: N8nContext,
		readonly main: N8nServer,
		readonly workers: N8nProcess[],
		readonly webhookProcessors: N8nProcess[],
		readonly balancer: WebhookBalancer,
		readonly services: QueueServices,
	) {}

	/** Production webhook URL of a path, through the balancer. */
	webhookUrl(path: string): string {
		return `${this.balancer.url}/webhook/${path.replace(/^\//, '')}`;
	}

	/** Index of the worker whose log says it ran execution `id`, or -1. */
	workerOf(executionId: string | number): number {
		const line = new RegExp(`Worker started execution ${executionId} \\(`);
		return this.workers.findIndex((worker) => line.test(worker.log()));
	}

	/** Executions each worker started so far (from their logs). */
	executionsPerWorker(): number[] {
		return this.workers.map((worker) => (worker.log().match(/Worker started execution \S+ \(/g) ?? []).length);
	}

	/** PIDs of every n8n process of the cluster. */
	pids(): Array<{ kind: string; index: number; pid: number | undefined }> {
		return [
			{ kind: 'main', index: 0, pid: this.main.pid },
			...this.workers.map((w) => ({ kind: 'worker', index: w.index, pid: w.pid })),
			...this.webhookProcessors.map((w) => ({ kind: 'webhook', index: w.index, pid: w.pid })),
		];
	}

	logTails(lines = 30): string {
		return [this.main.logTail(lines), ...[...this.workers, ...this.webhookProcessors].map((p) => p.logTail(lines))].join(
			'\n',
		);
	}

	/** Stops every process by its PID: webhook processors, main, then workers. */
	async stop(): Promise<void> {
		await Promise.all(this.webhookProcessors.map(async (p) => await p.stop()));
		await this.main.stop();
		await Promise.all(this.workers.map(async (p) => await p.stop()));
	}
}

/**
 * Starts main (owner and API key included), then the workers and webhook processors in
 * parallel. Queue mode must be enabled on the context (enableQueueMode).
 */
export async function startQueueCluster(ctx: N8nContext, options: QueueClusterOptions = {}): Promise<QueueCluster> {
	const state = stateOf(ctx);
	const started: Array<{ stop(): Promise<void> }> = [];
	try {
		// Main first: it runs the database migrations the others expect.
		const main = await startN8n(ctx);
		started.push(main);
		const [workers, webhookProcessors] = await Promise.all([
			Promise.all(
				Array.from({ length: options.workers ?? 2 }, async (_, i) => {
					const worker = await startWorker(ctx, i, options.concurrency);
					started.push(worker);
					return worker;
				}),
			),
			Promise.all(
				Array.from({ length: options.webhookProcessors ?? 2 }, async (_, i) => {
					const processor = await startWebhookProcessor(ctx, i);
					started.push(processor);
					return processor;
				}),
			),
		]);
		return new QueueCluster(ctx, main, workers, webhookProcessors, state.balancer, state.services);
	} catch (error) {
		await Promise.all(started.map(async (p) => await p.stop()));
		throw error;
	}
}
