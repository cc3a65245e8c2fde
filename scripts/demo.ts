/**
 * `npm run demo`: n8n with this package, against the simulator, ready to click through.
 * Uses the same machinery as the end-to-end tests (test/e2e/harness).
 */
import { rmSync, writeFileSync } from 'node:fs';

import { startSimulator } from '../test/simulator';
import {
	DEFAULT_OWNER,
	N8N_VERSIONS,
	N8nContext,
	ensureN8n,
	packRepository,
	reservePort,
	restImportCredentials,
	restImportWorkflows,
	startN8n,
} from '../test/e2e/harness';
import { exampleFiles, fakeModelCredential, loadExample, simulatorCredentials } from '../test/e2e/support/examples';
import { startFakeModel } from '../test/e2e/support/fakeModel';
import { DEMO_DIR, DEMO_SESSION_FILE, type DemoSession } from './demo-session';

const FLAGSHIP = 'consultation-finished-sign-email-pdf.json';

function option(name: string, fallback: string): string {
	const index = process.argv.indexOf(`--${name}`);
	return index > 0 && process.argv[index + 1] ? process.argv[index + 1] : fallback;
}

async function portalToken(apiBaseUrl: string, demo: { countryCode: string; phone: string; code: string }): Promise<string> {
	const post = async (path: string, body: object) =>
		await fetch(`${apiBaseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
	await post('/patient_portal/auth', { country_code: demo.countryCode, phone: demo.phone });
	const answer = (await (await post('/patient_portal/validate', { country_code: demo.countryCode, phone: demo.phone, code: demo.code })).json()) as { token: string };
	return answer.token;
}

async function main(): Promise<void> {
	const version = option('n8n', N8N_VERSIONS.v2);
	const port = Number(option('port', '5678'));
	// Free until n8n binds it: the task broker's port must not be this one (demo.test.ts picks it from the same range).
	reservePort(port);
	const say = (line = '') => process.stdout.write(`${line}\n`);

	say(`Preparing n8n ${version} (the first time this installs Node 24 and n8n from the npm registry: several minutes)...`);
	const install = ensureN8n(version);

	const sim = await startSimulator({ apiPort: 4010, webhooksPort: 4011, allowHttpCallbacks: true });
	const rootDir = DEMO_DIR;
	rmSync(rootDir, { recursive: true, force: true });
	const ctx = new N8nContext({ version, label: 'demo', env: { N8N_DISABLE_UI: 'false' } }, install, rootDir, port);

	say('Building (when the sources changed) and installing the package the way the Community Nodes screen does...');
	// Not always: the end-to-end tests run the demo beside other files packing the same dist/.
	ctx.installPackage(packRepository(rootDir));
	// The AI agent example talks to a scripted model: it looks an encounter's invoice up and e-mails it.
	const model = await startFakeModel();

	say('Starting n8n...');
	const server = await startN8n(ctx);
	// Saved through the running n8n's REST API, as the editor saves them (no n8n import run each).
	await restImportCredentials(server, [
		...simulatorCredentials(sim, await portalToken(sim.apiBaseUrl, sim.portalDemo)),
		fakeModelCredential(model.baseUrl),
	]);
	const files = exampleFiles();
	const ids = await restImportWorkflows(server, files.map((file) => loadExample(file, sim)));
	const flagshipId = ids[files.indexOf(FLAGSHIP)];
	await server.activateWorkflow(flagshipId);
	const flagshipName = loadExample(FLAGSHIP, sim).name;
	// A fresh finished consultation with a chargeable invoice on every call: the flagship runs each time.
	const finishCommand = `curl -s -X POST ${sim.apiOrigin}/__sim/finish-consultation`;
	const session: DemoSession = {
		baseUrl: ctx.baseUrl,
		apiKey: ctx.auth?.apiKey ?? '',
		workflowId: flagshipId,
		workflowName: flagshipName,
		finishCommand,
	};
	writeFileSync(DEMO_SESSION_FILE, JSON.stringify(session), { mode: 0o600 });

	say();
	say(`n8n editor:      ${ctx.baseUrl}   (log in as ${DEFAULT_OWNER.email} / ${DEFAULT_OWNER.password})`);
	say(`Simulator API:   ${sim.apiBaseUrl}   account ${sim.demo.username} / ${sim.demo.password}`);
	say(`Webhook service: ${sim.webhooksBaseUrl}   topic prefix ${sim.topicPrefix}`);
	say(`Credentials "Clinic API (simulator)" and "Clinic Patient Portal (simulator)" and ${files.length} example workflows are loaded;`);
	say(`"${flagshipName}" is active. Finish a new consultation to run it (as often as you like):`);
	say(`  ${finishCommand}`);
	say('Then see what the last run did:');
	say('  npm run demo:last');
	say(`n8n's log: ${server.logFile}`);
	say('Ctrl+C stops n8n and the simulator.');

	let stopping = false;
	const stop = async () => {
		if (stopping) return;
		stopping = true;
		say('\nStopping...');
		rmSync(DEMO_SESSION_FILE, { force: true });
		await server.stop();
		await sim.close();
		await model.close();
		process.exit(0);
	};
	process.on('SIGINT', () => void stop());
	process.on('SIGTERM', () => void stop());
	server.child?.once('exit', () => {
		if (!stopping) {
			say(`n8n exited; see ${server.logFile}`);
			void sim.close().then(() => process.exit(1));
		}
	});
}

main().catch((error) => {
	process.stderr.write(`demo: ${error instanceof Error ? error.message : String(error)}\n`);
	process.exit(1);
});
