/**
 * The setup most end-to-end files share, in one call: a simulator, an n8n of `version`
 * with this package installed (unless `installPackage: false`), n8n started (with `queue`, a
 * queue-mode cluster), and the simulator's credentials and the file's workflows created
 * through its REST API (their credentials' ids: `importedCredentialId`); with `installPackage:
 * false` no credentials (n8n's REST API refuses a type it does not know: the file imports them
 * once it installed the package). The simulator and the cluster stop after the file.
 *
 *   const clinic = useClinicN8n({ version, label: 'burst', workflows: () => [workflow()] });
 *   it('…', clinic.n8n.run(async () => { clinic.sim.emit(…); await clinic.server.… }));
 */
import { startSimulator, type Simulator, type SimulatorOptions } from '../../simulator';
import { attachLaneServer, createLaneContext, shareWithLane } from '../harness/laneServer';
import {
	enableQueueMode,
	packRepository,
	restImportCredentials,
	restImportWorkflows,
	startN8n,
	startQueueCluster,
	useN8nContext,
	type CredentialImport,
	type QueueCluster,
	type QueueClusterOptions,
	type N8nContext,
	type N8nContextOptions,
	type N8nFixture,
	type N8nServer,
	type WorkflowImport,
} from '../harness';
import { simulatorCredentials } from './examples';

export interface ClinicN8nOptions {
	version: string;
	/** Names the n8n folder and logs. */
	label: string;
	env?: N8nContextOptions['env'];
	/** n8n 2.x's workflow publication service (default: n8n's own default). */
	publicationService?: N8nContextOptions['publicationService'];
	/**
	 * Queue mode: PostgreSQL, Redis and a webhook balancer before anything else, and at the
	 * start a cluster (main, workers, webhook processors) instead of one `n8n start`.
	 */
	queue?: QueueClusterOptions;
	/** The simulator's options; given the n8n context for what depends on its address. */
	simulator?: SimulatorOptions | ((ctx: N8nContext) => SimulatorOptions);
	/** Before the package is installed: seed data, extra files in the user folder. */
	prepare?: (sim: Simulator, ctx: N8nContext) => void | Promise<void>;
	/** Default: the simulator's password credential (`simulatorCredentials`); none without the package. */
	credentials?: (sim: Simulator) => CredentialImport[];
	workflows?: (sim: Simulator) => WorkflowImport[];
	/**
	 * Default true: the package is in n8n's nodes folder before n8n starts, as the Community
	 * Nodes screen puts it; 'npm': with the command docs/queue-mode.md gives for images and workers.
	 */
	installPackage?: boolean | 'npm';
	/**
	 * The lane's n8n of this version (test/e2e/harness/laneServer.ts): started by the lane's
	 * first file that asks, kept for the next ones, which add their credentials and workflows.
	 * Only with n8n's defaults (no `env`, `publicationService`, `queue` or `installPackage`), and
	 * for files that neither stop nor restart n8n. The file's active workflows are deactivated
	 * after it.
	 */
	laneServer?: boolean;
}

export interface ClinicN8n {
	readonly n8n: N8nFixture;
	readonly sim: Simulator;
	/** The running n8n (after `start`, or the one a test started and passed to `track`). */
	server: N8nServer;
	/** The ids of `workflows`, in their order. */
	readonly workflowIds: string[];
	/** With `queue`: the cluster started (its main is `server`). */
	readonly cluster: QueueCluster;
}

export function useClinicN8n(options: ClinicN8nOptions): ClinicN8n {
	let sim: Simulator | undefined;
	let server: N8nServer | undefined;
	let workflowIds: string[] = [];
	let cluster: QueueCluster | undefined;
	const { version, label, env, publicationService } = options;
	if (options.laneServer && (env || publicationService || options.queue || options.installPackage !== undefined)) {
		throw new Error(`${label}: laneServer takes n8n's defaults only (no env, publicationService, queue or installPackage)`);
	}
	const setup = async (ctx: N8nContext) => {
		if (options.queue) {
			const { services } = await enableQueueMode(ctx);
			process.stdout.write(`${label} ${version}: PostgreSQL ${services.origin.postgres}, Redis ${services.origin.redis}\n`);
		}
		const simulatorOptions = typeof options.simulator === 'function' ? options.simulator(ctx) : options.simulator;
		sim = await startSimulator(simulatorOptions);
		await options.prepare?.(sim, ctx);
		const credentials = options.installPackage === false ? [] : (options.credentials ?? simulatorCredentials)(sim);
		const workflows = options.workflows?.(sim);
		server = ctx.laneServer ? attachLaneServer(ctx) : await start(ctx);
		// Through the running n8n's REST API (in queue mode the main's: all share the database).
		await restImportCredentials(server, credentials);
		if (workflows) workflowIds = await restImportWorkflows(server, workflows);
	};
	const start = async (ctx: N8nContext): Promise<N8nServer> => {
		if (options.installPackage !== false) ctx.installPackage(packRepository(ctx.rootDir), options.installPackage === 'npm' ? 'npm' : 'screen');
		if (options.queue) {
			cluster = await startQueueCluster(ctx, options.queue);
			const pids = cluster.pids().map((p) => `${p.kind}${p.kind === 'main' ? '' : ` ${p.index}`} pid ${p.pid}`);
			process.stdout.write(`${label} ${version}: started ${pids.join(', ')}\n`);
		}
		const startedAt = Date.now();
		const started = cluster?.main ?? (await startN8n(ctx));
		return options.laneServer ? shareWithLane(ctx, started, startedAt) : n8n.track(started);
	};
	const n8n = useN8nContext({ version, label, env, publicationService }, setup, options.laneServer ? createLaneContext : undefined);

	afterAll(async () => {
		await cluster?.stop();
		// The lane's next files share this n8n: nothing of this file's stays active there.
		if (options.laneServer && server?.running) {
			for (const id of workflowIds) {
				if ((await server.getWorkflow(id)).active) await server.deactivateWorkflow(id);
			}
		}
		await sim?.close();
	});

	return {
		n8n,
		get sim() {
			if (!sim) throw new Error('The simulator is not started (beforeAll failed?)');
			return sim;
		},
		get server() {
			if (!server) throw new Error('n8n is not started (beforeAll failed?)');
			return server;
		},
		set server(started: N8nServer) {
			server = n8n.track(started);
		},
		get workflowIds() {
			return workflowIds;
		},
		get cluster() {
			if (!cluster) throw new Error('no queue-mode cluster (no `queue` option, or beforeAll failed)');
			return cluster;
		},
	};
}
