/**
 * `npm run demo` as a newcomer uses it: start it, run the command it suggests three times in a
 * row, and read each run with the command it suggests for that (`npm run demo:last`). Every run
 * of the flagship example must succeed: each suggested command finishes a fresh consultation
 * with a chargeable invoice, which is signed, e-mailed and downloaded.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

import { N8N_VERSIONS, REPO_ROOT, ensureN8n, waitFor } from './harness';
import { getFreePort } from './harness/env';
import { stopProcess } from './harness/processes';

const run = promisify(execFile);
const TEST_TIMEOUT_MS = 10 * 60_000;

let demo: ChildProcess | undefined;
let output = '';
afterAll(async () => {
	if (demo) await stopProcess(demo, 30_000);
});

async function demoLast(): Promise<string> {
	const { stdout } = await run('npm', ['run', '--silent', 'demo:last'], { cwd: REPO_ROOT, encoding: 'utf8' });
	return stdout;
}

it(
	'n8n 2.41: the demo’s suggested command, run three times, gives three successful flagship runs',
	async () => {
		ensureN8n(N8N_VERSIONS.v2);
		const port = await getFreePort();
		demo = spawn('bash', ['scripts/demo.sh', '--port', String(port)], {
			cwd: REPO_ROOT,
			stdio: ['ignore', 'pipe', 'pipe'],
			detached: true,
		});
		demo.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
		demo.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));

		const finishCommand = await waitFor(
			'the demo to print its suggested command',
			async () => {
				if (demo?.exitCode !== null) throw Object.assign(new Error(`the demo exited:\n${output}`), { fatal: true });
				return /^\s+(curl -s -X POST \S+)$/m.exec(output)?.[1];
			},
			{ timeoutMs: 8 * 60_000, intervalMs: 500 },
		);
		expect(output).toContain('npm run demo:last');
		expect(await demoLast()).toContain('has not run yet');

		const seen = new Set<string>();
		for (let round = 1; round <= 3; round++) {
			await run('bash', ['-c', finishCommand], { cwd: REPO_ROOT });
			const report = await waitFor(
				`flagship run ${round}`,
				async () => {
					const text = await demoLast();
					const id = /execution (\d+): (\w+)/.exec(text);
					if (!id || seen.has(id[1]) || id[2] === 'running' || id[2] === 'new') return undefined;
					seen.add(id[1]);
					return text;
				},
				{ timeoutMs: 60_000, intervalMs: 500 },
			);
			expect(report).toMatch(/execution \d+: success/);
			expect(report).toContain('email_sent true');
			expect(report).not.toMatch(/error:/);
		}
		expect(seen.size).toBe(3);
	},
	TEST_TIMEOUT_MS,
);
