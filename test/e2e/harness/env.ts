/**
 * The environment n8n runs with in the tests: its own user folder, loopback only, no
 * telemetry, no calls home (version notifications, templates, banners, the community
 * node registry, license renewal), sqlite, a fixed encryption key.
 */
import { createServer } from 'node:net';

import { majorOf } from './install';

/** Fixed so that credentials imported with one process can be read by the next. */
export const N8N_E2E_ENCRYPTION_KEY = 'n8n-nodes-clinic-e2e-encryption-key';

/**
 * n8n 2.x activates ("publishes") workflows through its publication service by default:
 * the API answers first, triggers start afterwards. `'off'` sets
 * `N8N_USE_WORKFLOW_PUBLICATION_SERVICE=false`: activation is done when the API answers,
 * as on 1.x. No effect on 1.x.
 */
export type PublicationService = 'default' | 'off';

export interface N8nEnvOptions {
	publicationService?: PublicationService;
	/** Broker port of n8n's task runners (default: `port + 1`). */
	runnersBrokerPort?: number;
	/** `N8N_LOG_LEVEL` (default `info`: the logs go to files and are shown on failure). */
	logLevel?: 'error' | 'warn' | 'info' | 'debug';
	/** Added last: overrides anything above. */
	extra?: Record<string, string | undefined>;
}

/**
 * Ports for the processes the tests start come from a range below the kernel's ephemeral
 * range (32768-60999 by default): a port there is never picked by another process's
 * `listen(0)` or taken as the local end of an outgoing connection (whose TIME_WAIT would
 * block n8n's bind for a minute). Each jest process of `npm run test:all` gets its own range
 * through `N8N_E2E_PORTS` ("first-last"), so lanes running side by side never share a port.
 */
const DEFAULT_PORTS = '20000-21999';

function portRange(): { first: number; last: number } {
	const text = process.env.N8N_E2E_PORTS ?? DEFAULT_PORTS;
	const match = /^(\d+)-(\d+)$/.exec(text);
	const first = Number(match?.[1]);
	const last = Number(match?.[2]);
	if (!match || first < 1024 || last < first || last > 65535) {
		throw new Error(`N8N_E2E_PORTS must look like 20000-21999 (got "${text}")`);
	}
	return { first, last };
}

/**
 * Ports handed out in this process. A context's fixed port is free while its n8n restarts,
 * and a port is free until its process binds it: never hand either out again here.
 */
const handedOut = new Set<number>();

function isFree(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const server = createServer();
		server.unref();
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});
}

/** A port another process chose for this one (e.g. on its command line): never handed out here. */
export function reservePort(port: number): void {
	handedOut.add(port);
}

/** A TCP port of this process's range, free a moment ago on 127.0.0.1 and never handed out before here. */
export async function getFreePort(): Promise<number> {
	const { first, last } = portRange();
	for (let port = first; port <= last; port++) {
		if (handedOut.has(port)) continue;
		handedOut.add(port);
		if (await isFree(port)) return port;
	}
	throw new Error(`no free port left in ${first}-${last} (N8N_E2E_PORTS)`);
}

/** Variables of the parent process that are harmless to pass on (the rest is dropped). */
const PASS_THROUGH = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'USER', 'SHELL'];

/**
 * The complete environment for an n8n process (`start`, `execute`, `import:*`) of
 * `version` with user folder `userFolder`, listening on 127.0.0.1:`port`.
 */
export function n8nEnv(
	version: string,
	userFolder: string,
	port: number,
	options: N8nEnvOptions = {},
): NodeJS.ProcessEnv {
	const major = majorOf(version);
	const env: NodeJS.ProcessEnv = {};
	for (const key of PASS_THROUGH) if (process.env[key] !== undefined) env[key] = process.env[key];

	Object.assign(env, {
		NODE_ENV: 'production',
		TZ: 'UTC',
		GENERIC_TIMEZONE: 'UTC',

		// Where and how it runs.
		N8N_USER_FOLDER: userFolder,
		N8N_PORT: String(port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: '127.0.0.1',
		N8N_PROTOCOL: 'http',
		N8N_EDITOR_BASE_URL: `http://127.0.0.1:${port}/`,
		WEBHOOK_URL: `http://127.0.0.1:${port}/`,
		N8N_SECURE_COOKIE: 'false',
		N8N_ENCRYPTION_KEY: N8N_E2E_ENCRYPTION_KEY,
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		DB_TYPE: 'sqlite',
		EXECUTIONS_MODE: 'regular',
		EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
		EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
		EXECUTIONS_DATA_SAVE_MANUAL_EXECUTIONS: 'true',
		EXECUTIONS_DATA_PRUNE: 'false',
		N8N_PUBLIC_API_DISABLED: 'false',
		N8N_PUBLIC_API_SWAGGERUI_DISABLED: 'true',
		// No editor: at every start n8n rewrites each of the editor's files into its static cache (seconds of CPU on
		// 2.x). A browser, the demo and n8n's frontend settings (`/rest/settings`) need it: `N8N_DISABLE_UI: 'false'`.
		N8N_DISABLE_UI: 'true',
		N8N_GRACEFUL_SHUTDOWN_TIMEOUT: '15',

		// Task runners: their broker gets its own free port (several n8n processes may run).
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		// (the harness picks a fresh free port for every process it spawns).
		N8N_RUNNERS_BROKER_PORT: String(options.runnersBrokerPort ?? port + 1),

		// Nothing phones home.
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_DYNAMIC_BANNERS_ENABLED: 'false',
		N8N_LICENSE_AUTO_RENEW_ENABLED: 'false',
		N8N_AI_ENABLED: 'false',
		N8N_MCP_COMMUNITY_NODE_DISCOVERY_ENABLED: 'false',
		// Community packages: loaded from <user folder>/.n8n/nodes; no lookups of n8n's
		// vetted-package list (Strapi) and no reinstalling from the npm registry.
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		N8N_COMMUNITY_PACKAGES_PREVENT_LOADING: 'false',
		N8N_VERIFIED_PACKAGES_ENABLED: 'false',
		N8N_UNVERIFIED_PACKAGES_ENABLED: 'true',
		N8N_REINSTALL_MISSING_PACKAGES: 'false',
		SCARF_ANALYTICS: 'false',

		// Logs: plain text on stdout, which the harness writes to a file.
		N8N_LOG_OUTPUT: 'console',
		N8N_LOG_FORMAT: 'text',
		N8N_LOG_LEVEL: options.logLevel ?? 'info',
		NO_COLOR: '1',
	});

	if (major >= 2) {
		env.N8N_USE_WORKFLOW_PUBLICATION_SERVICE = options.publicationService === 'off' ? 'false' : 'true';
		// 2.x's MCP server registry refreshes its list from api.n8n.io (a system task that
		// fails offline and logs stack traces). Not a module 1.x knows (it would refuse it).
		env.N8N_DISABLED_MODULES = 'mcp-registry';
	}

	for (const [key, value] of Object.entries(options.extra ?? {})) {
		if (value === undefined) delete env[key];
		else env[key] = value;
	}
	return env;
}
