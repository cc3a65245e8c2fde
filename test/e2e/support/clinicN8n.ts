/**
 * The setup most end-to-end files share, in one call: a simulator, an n8n of `version`
 * with this package installed (unless `installPackage: false`), the simulator's credentials and the file's workflows
 * imported, and n8n started (unless `start: false`). The simulator closes after the file.
 *
 *   const clinic = useClinicN8n({ version, label: 'burst', workflows: () => [workflow()] });
 *   it('…', clinic.n8n.run(async () => { clinic.sim.emit(…); await clinic.server.… }));
 */
import { startSimulator, type Simulator, type SimulatorOptions } from '../../simulator';
import {
	importCredentials,
	importWorkflows,
	packRepository,
	startN8n,
	useN8nContext,
	type CredentialImport,
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
	/** The simulator's options; given the n8n context for what depends on its address. */
	simulator?: SimulatorOptions | ((ctx: N8nContext) => SimulatorOptions);
	/** Before the package is installed: seed data, extra files in the user folder. */
	prepare?: (sim: Simulator, ctx: N8nContext) => void | Promise<void>;
	/** Default: the simulator's password credential (`simulatorCredentials`). */
	credentials?: (sim: Simulator) => CredentialImport[];
	workflows?: (sim: Simulator) => WorkflowImport[];
	/** Default true: the package is in n8n's nodes folder before n8n starts. */
	installPackage?: boolean;
	/** Default true: n8n is running when the first test starts. */
	start?: boolean;
}

export interface ClinicN8n {
	readonly n8n: N8nFixture;
	readonly sim: Simulator;
	/** The running n8n (after `start`, or the one a test started and passed to `track`). */
	server: N8nServer;
	/** The ids of `workflows`, in their order. */
	readonly workflowIds: string[];
}

export function useClinicN8n(options: ClinicN8nOptions): ClinicN8n {
	let sim: Simulator | undefined;
	let server: N8nServer | undefined;
	let workflowIds: string[] = [];
	const n8n = useN8nContext({ version: options.version, label: options.label, env: options.env }, async (ctx) => {
		const simulatorOptions = typeof options.simulator === 'function' ? options.simulator(ctx) : options.simulator;
		sim = await startSimulator(simulatorOptions);
		await options.prepare?.(sim, ctx);
		if (options.installPackage !== false) ctx.installPackage(packRepository(ctx.rootDir));
		await importCredentials(ctx, (options.credentials ?? simulatorCredentials)(sim));
		if (options.workflows) workflowIds = await importWorkflows(ctx, options.workflows(sim));
		if (options.start !== false) server = n8n.track(await startN8n(ctx));
	});

	afterAll(async () => {
		await sim?.close();
	});

	return {
		n8n,
		get sim() {
			if (!sim) throw new Error('The simulator is not started (beforeAll failed?)');
			return sim;
		},
		get server() {
			if (!server) throw new Error('n8n is not started (start: false, or beforeAll failed)');
			return server;
		},
		set server(started: N8nServer) {
			server = n8n.track(started);
		},
		get workflowIds() {
			return workflowIds;
		},
	};
}
