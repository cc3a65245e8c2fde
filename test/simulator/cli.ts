/**
 * Standalone simulator: `npm run simulator -- [flags]`.
 *
 *   --port <n>               main API port (env CLINIC_SIM_PORT, default 4010)
 *   --webhooks-port <n>      webhook service port (env CLINIC_SIM_WEBHOOKS_PORT, default 4011)
 *   --host <addr>            listen address (env CLINIC_SIM_HOST, default 127.0.0.1)
 *   --allow-http-callbacks   accept http:// callbacks on loopback hosts (env CLINIC_SIM_ALLOW_HTTP_CALLBACKS=1)
 *   --token-lifetime <s>     expires_in of issued tokens (env CLINIC_SIM_TOKEN_LIFETIME, default 86400)
 *   --latency <ms>           delay before every answer (env CLINIC_SIM_LATENCY, default 0)
 *   --topic-prefix <p>       topic prefix (env CLINIC_SIM_TOPIC_PREFIX, default clinic-38729)
 *   --retry-delay <ms>       wait before a delivery retry (env CLINIC_SIM_RETRY_DELAY, default 200)
 */
import { startSimulator } from './index';
import type { SimulatorOptions } from './types';

const USAGE = `Usage: npm run simulator -- [--port 4010] [--webhooks-port 4011] [--host 127.0.0.1]
       [--allow-http-callbacks] [--token-lifetime 86400] [--latency 0] [--topic-prefix clinic-38729] [--retry-delay 200]`;

function fail(message: string): never {
	process.stderr.write(`${message}\n${USAGE}\n`);
	process.exit(2);
}

function parseArgs(argv: string[]): Map<string, string | true> {
	const flags = new Map<string, string | true>();
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === '--help' || arg === '-h') {
			process.stdout.write(`${USAGE}\n`);
			process.exit(0);
		}
		if (!arg.startsWith('--')) fail(`Unexpected argument ${arg}`);
		const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
		if (name === 'allow-http-callbacks') {
			flags.set(name, inline === undefined ? true : inline);
		} else if (inline !== undefined) {
			flags.set(name, inline);
		} else {
			const value = argv[++i];
			if (value === undefined) fail(`--${name} needs a value`);
			flags.set(name, value);
		}
	}
	return flags;
}

const KNOWN = ['port', 'webhooks-port', 'host', 'allow-http-callbacks', 'token-lifetime', 'latency', 'topic-prefix', 'retry-delay'];

function main(): void {
	const flags = parseArgs(process.argv.slice(2));
	for (const name of flags.keys()) if (!KNOWN.includes(name)) fail(`Unknown flag --${name}`);
	const read = (flag: string, env: string): string | true | undefined => flags.get(flag) ?? process.env[env];
	const integer = (flag: string, env: string, fallback: number): number => {
		const value = read(flag, env);
		if (value === undefined) return fallback;
		const number = Number(value);
		if (value === true || !Number.isInteger(number) || number < 0) fail(`--${flag} must be a non-negative integer`);
		return number;
	};
	const httpFlag = read('allow-http-callbacks', 'CLINIC_SIM_ALLOW_HTTP_CALLBACKS');
	const options: SimulatorOptions = {
		apiPort: integer('port', 'CLINIC_SIM_PORT', 4010),
		webhooksPort: integer('webhooks-port', 'CLINIC_SIM_WEBHOOKS_PORT', 4011),
		host: (read('host', 'CLINIC_SIM_HOST') as string | undefined) ?? '127.0.0.1',
		allowHttpCallbacks: httpFlag === true || (typeof httpFlag === 'string' && /^(1|true|yes)$/i.test(httpFlag)),
		tokenLifetimeSeconds: integer('token-lifetime', 'CLINIC_SIM_TOKEN_LIFETIME', 86400),
		latencyMs: integer('latency', 'CLINIC_SIM_LATENCY', 0),
		topicPrefix: (read('topic-prefix', 'CLINIC_SIM_TOPIC_PREFIX') as string | undefined) ?? 'clinic-38729',
		deliveryRetryDelayMs: integer('retry-delay', 'CLINIC_SIM_RETRY_DELAY', 200),
	};

	startSimulator(options).then(
		(sim) => {
			process.stdout.write(
				[
					'Clinic service simulator',
					`  Main API base URL:      ${sim.apiBaseUrl}`,
					`  Webhook service URL:    ${sim.webhooksBaseUrl}`,
					`  Topic prefix:           ${sim.topicPrefix}   (e.g. ${sim.topicPrefix}.patient)`,
					`  Demo account:           ${sim.demo.username} / ${sim.demo.password}`,
					`  2FA account:            ${sim.twoFactor.username} / ${sim.twoFactor.password}  (password grant answers 403 2fa;`,
					`                          get a refresh token with POST ${sim.apiOrigin}/__sim/refresh-token {"username": "${sim.twoFactor.username}"})`,
					`  Patient portal demo:    country code ${sim.portalDemo.countryCode}, phone ${sim.portalDemo.phone}, code ${sim.portalDemo.code}`,
					'                          (POST /patient_portal/auth first, then /patient_portal/validate)',
					`  Callbacks:              ${options.allowHttpCallbacks ? 'https, or http on loopback hosts' : 'https only'}`,
					`  Token lifetime:         ${options.tokenLifetimeSeconds} s   Latency: ${options.latencyMs} ms`,
					`  Control surface:        ${sim.apiOrigin}/__sim/  (log, state, emit, reset, ...)`,
					'Press Ctrl+C to stop.',
					'',
				].join('\n'),
			);
			let stopping = false;
			const stop = () => {
				if (stopping) return;
				stopping = true;
				sim.close().then(
					() => process.exit(0),
					() => process.exit(1),
				);
			};
			process.on('SIGINT', stop);
			process.on('SIGTERM', stop);
		},
		(error: Error) => fail(`Could not start the simulator: ${error.message}`),
	);
}

main();
