/**
 * Jest glue: one context per `describe` block (created in beforeAll, disposed in
 * afterAll, even when tests fail), and `run` to wrap a test body so that a failure
 * carries the tail of n8n's logs and keeps the temp folder.
 *
 *   describe.each(ALL_N8N_VERSIONS)('n8n %s', (version) => {
 *     const n8n = useN8nContext({ version, packageTarballs: [tarball] });
 *     it('runs', n8n.run(async (ctx) => { ... }), 5 * 60_000);
 *   });
 */
import { createN8nContext, type N8nContext, type N8nContextOptions } from './context';
import type { N8nServer } from './server';

export interface N8nFixture {
	/** The context (available once beforeAll ran). */
	readonly ctx: N8nContext;
	/**
	 * Wraps a test body: on failure marks the context failed (temp folder kept) and
	 * appends the tail of the latest n8n logs to the error message.
	 */
	run(fn: (ctx: N8nContext) => Promise<void>): () => Promise<void>;
	/** Servers registered here are stopped in afterAll (if still running), and when the test that started them fails. */
	track(server: N8nServer): N8nServer;
}

/** Time for beforeAll: a first install of n8n takes minutes. */
export const INSTALL_TIMEOUT_MS = 30 * 60_000;

export function useN8nContext(
	options: N8nContextOptions | (() => N8nContextOptions),
	setup?: (ctx: N8nContext) => Promise<void>,
	/** How the context is made (laneServer.ts: `createLaneContext`). */
	create: (options: N8nContextOptions) => Promise<N8nContext> = createN8nContext,
): N8nFixture {
	let ctx: N8nContext | undefined;
	const servers: N8nServer[] = [];

	beforeAll(async () => {
		ctx = await create(typeof options === 'function' ? options() : options);
		if (setup) {
			try {
				await setup(ctx);
			} catch (error) {
				ctx.failed = true;
				throw withLogs(error, ctx);
			}
		}
	}, INSTALL_TIMEOUT_MS);

	afterAll(async () => {
		for (const server of servers) if (server.running) await server.stop();
		await ctx?.dispose();
	}, 60_000);

	return {
		get ctx(): N8nContext {
			if (!ctx) throw new Error('n8n context not ready (beforeAll failed?)');
			return ctx;
		},
		run(fn) {
			return async () => {
				if (!ctx) throw new Error('n8n context not ready (beforeAll failed?)');
				const trackedBefore = servers.length;
				try {
					await fn(ctx);
				} catch (error) {
					ctx.failed = true;
					const failed = withLogs(error, ctx);
					// The n8n processes this test started go with it: the next test's n8n needs their ports.
					for (const server of servers.slice(trackedBefore)) if (server.running) await server.stop().catch(() => undefined);
					throw failed;
				}
			};
		},
		track(server) {
			servers.push(server);
			return server;
		},
	};
}

function withLogs(error: unknown, ctx: N8nContext): unknown {
	if (!(error instanceof Error)) return error;
	if (error.name === 'N8nHarnessError') return error; // already carries its log
	error.message += `\n\n(n8n logs in ${ctx.logDir})\n${ctx.logTails(30, 2)}`;
	return error;
}
