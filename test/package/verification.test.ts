/**
 * What n8n checks before it verifies a community package, run here the way n8n runs it:
 * its scanner on the source and on the `npm pack` tarball (inline eslint config off),
 * `n8n-node lint`, the package metadata, the licence and the provenance publish workflow.
 */
import { execFileSync, spawnSync } from 'child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { parse as parseYaml } from 'yaml';

const root = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The environment of a shell, without jest's NODE_ENV=test (eslint-plugin-n8n-nodes-base reads
 * file names differently under it, for its own tests). */
const { NODE_ENV: _jestNodeEnv, ...shellEnv } = process.env;

interface ScanLeg {
	passed: boolean;
	message?: string;
	details?: string;
}

describe("n8n's community-package scanner", () => {
	let report: Record<'source' | 'tarball', ScanLeg>;

	beforeAll(() => {
		if (!existsSync(join(root, 'dist', 'nodes', 'Clinic', 'Clinic.node.js'))) {
			throw new Error('dist/ is missing: run `npm run build` before these tests (npm run test:all does)');
		}
		const run = spawnSync('node', ['scripts/scan-package.mjs', '--json'], { cwd: root, encoding: 'utf8', env: shellEnv, timeout: 120_000 });
		const line = run.stdout.trim().split('\n').pop() ?? '';
		if (!line.startsWith('{')) throw new Error(`the scan printed no report (exit ${run.status}): ${run.stderr}`);
		report = JSON.parse(line);
	}, 150_000);

	it.each(['source', 'tarball'] as const)('passes on the %s', (leg) => {
		// The scanner's own report is the failure message: it names file, line and rule.
		expect(report[leg].details ?? '').toBe('');
		expect(report[leg]).toMatchObject({ passed: true });
	});
});

describe('n8n-node lint (@n8n/node-cli)', () => {
	it('is clean', () => {
		const run = spawnSync('npx', ['--no-install', 'n8n-node', 'lint'], {
			cwd: root,
			encoding: 'utf8',
			env: { ...shellEnv, CI: 'true', FORCE_COLOR: '0' },
			timeout: 120_000,
		});
		// eslint's own summary line ("✖ 3 problems") is what a finding looks like.
		expect(`${run.stdout}${run.stderr}`.replace(/\u001b\[[0-9;]*m/g, '')).not.toMatch(/✖ \d+ problems?/);
		expect(run.status).toBe(0);
	}, 150_000);

	// eslint loads its config with a dynamic import, which jest's module system does not run:
	// ask a plain Node process instead.
	const eslintApi = (script: string): any => {
		const run = spawnSync('node', ['-e', `const { ESLint } = require('eslint'); const eslint = new ESLint({ cwd: process.cwd() });
			(async () => { ${script} })().then((out) => console.log(JSON.stringify(out)), (e) => { console.error(e); process.exit(1); });`], {
			cwd: root,
			encoding: 'utf8',
			env: shellEnv,
			timeout: 60_000,
		});
		if (run.status !== 0) throw new Error(run.stderr);
		return JSON.parse(run.stdout);
	};

	it('covers what ships and leaves tests, benchmarks and scripts out by configuration', () => {
		const files = ['nodes/Clinic/Clinic.node.ts', 'nodes/ClinicTrigger/ClinicTrigger.node.ts', 'credentials/ClinicApi.credentials.ts', 'package.json', 'test/package/verification.test.ts', 'bench/run.ts', 'scripts/demo.ts'];
		const ignored = eslintApi(`const out = {}; for (const f of ${JSON.stringify(files)}) out[f] = await eslint.isPathIgnored(f); return out;`);
		expect(ignored).toEqual({
			'nodes/Clinic/Clinic.node.ts': false,
			'nodes/ClinicTrigger/ClinicTrigger.node.ts': false,
			'credentials/ClinicApi.credentials.ts': false,
			'package.json': false,
			'test/package/verification.test.ts': true,
			'bench/run.ts': true,
			'scripts/demo.ts': true,
		});
		const rules = eslintApi(`return {
			node: Object.keys((await eslint.calculateConfigForFile('nodes/Clinic/Clinic.node.ts')).rules),
			manifest: Object.keys((await eslint.calculateConfigForFile('package.json')).rules) };`);
		expect(rules.node).toContain('@n8n/community-nodes/require-node-api-error');
		expect(rules.manifest).toEqual(expect.arrayContaining(['@n8n/community-nodes/valid-author', '@n8n/community-nodes/no-runtime-dependencies']));
	});

	it("strict mode's config (n8n-node's template eslint.config.mjs, unchanged) finds nothing in what ships", () => {
		// `"n8n": {"strict": true}` makes n8n-node lint refuse any eslint.config.mjs but the
		// template's, which lints every .ts file, tests included (see the checklist); what ships
		// passes it, the newest rules of @n8n/eslint-plugin-community-nodes among them.
		const template = join(root, 'node_modules', '@n8n', 'node-cli', 'dist', 'template', 'templates', 'shared', 'default', 'eslint.config.mjs');
		expect(readFileSync(template, 'utf8').replace(/\s+/g, ' ').trim()).toBe("import { config } from '@n8n/node-cli/eslint'; export default config;");
		const run = spawnSync('node', ['-e', `const { ESLint } = require('eslint');
			const eslint = new ESLint({ cwd: process.cwd(), overrideConfigFile: ${JSON.stringify(template)} });
			(async () => {
				const results = await eslint.lintFiles(['nodes', 'credentials', 'package.json']);
				const rules = Object.keys((await eslint.calculateConfigForFile('nodes/ClinicTrigger/ClinicTrigger.node.ts')).rules);
				return { files: results.length, rules, messages: results.flatMap((r) => r.messages.map((m) => r.filePath.slice(process.cwd().length + 1) + ':' + m.line + ' ' + m.ruleId)) };
			})().then((out) => console.log(JSON.stringify(out)), (e) => { console.error(e); process.exit(1); });`], { cwd: root, encoding: 'utf8', env: shellEnv, timeout: 120_000 });
		if (run.status !== 0) throw new Error(run.stderr);
		const { files, rules, messages } = JSON.parse(run.stdout);
		expect(messages).toEqual([]);
		expect(files).toBeGreaterThan(50);
		expect(rules).toEqual(
			expect.arrayContaining(
				['trigger-node-conventions', 'webhook-lifecycle-complete', 'no-silent-error-swallowing', 'no-hardcoded-secrets'].map((rule) => `@n8n/community-nodes/${rule}`),
			),
		);
		expect(manifest.n8n.strict).toBeUndefined();
	}, 150_000);

	it("runs the plugin's package.json rules: an author without e-mail is reported", () => {
		const { author: _author, ...rest } = manifest;
		const broken = JSON.stringify({ ...rest, author: { name: manifest.author.name } }, null, 2);
		const ruleIds = eslintApi(`const [result] = await eslint.lintText(${JSON.stringify(broken)}, { filePath: 'package.json' });
			return result.messages.map((m) => m.ruleId);`);
		expect(ruleIds).toContain('@n8n/community-nodes/valid-author');
	});
});

describe('no eslint-disable in what ships (the scanner ignores them)', () => {
	it.each(['nodes', 'credentials'])('has none in %s/', (folder) => {
		const hits = spawnSync('grep', ['-rn', 'eslint-disable', folder], { cwd: root, encoding: 'utf8' }).stdout.trim();
		expect(hits).toBe('');
	});
});

describe('package metadata and licence', () => {
	it('names an author with an e-mail address and the MIT licence', () => {
		expect(manifest.author).toEqual({ name: expect.any(String), email: expect.stringMatching(/^[^@\s]+@[^@\s]+\.[a-z]+$/) });
		expect(manifest.license).toBe('MIT');
		expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
	});

	it('ships the LICENSE in the tarball', () => {
		const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
		expect((JSON.parse(output)[0].files as Array<{ path: string }>).map((file) => file.path)).toContain('LICENSE');
	});
});

describe('publish workflow (.github/workflows/publish.yml)', () => {
	const workflow = parseYaml(readFileSync(join(root, '.github', 'workflows', 'publish.yml'), 'utf8'));
	const job = workflow.jobs.publish;
	const steps = job.steps as Array<{ name?: string; uses?: string; run?: string; with?: Record<string, string>; env?: Record<string, string> }>;
	const publishStep = steps.find((step) => step.run?.includes('npm run release'))!;

	it('runs on version tags, on a GitHub-hosted runner, with the OIDC token provenance needs', () => {
		expect(workflow.on.push.tags).toEqual(['*.*.*']);
		expect(job['runs-on']).toBe('ubuntu-latest');
		expect(job.permissions).toEqual({ 'id-token': 'write', contents: 'read' });
	});

	it('publishes only after the whole suite passed (the test job, bash .ci/run under CI)', () => {
		expect(job.needs).toBe('test');
		const testSteps = workflow.jobs.test.steps as Array<{ run?: string; env?: Record<string, string> }>;
		expect(testSteps.find((step) => step.run === 'bash .ci/run')?.env).toEqual({ CI: 'true' });
	});

	it('checks out, sets up Node for the npm registry, installs from the lockfile, builds and scans before publishing', () => {
		const names = steps.map((step) => step.uses ?? step.run ?? '');
		const index = (pattern: RegExp) => names.findIndex((entry) => pattern.test(entry));
		expect(index(/^actions\/checkout@v\d/)).toBe(0);
		const setup = steps.find((step) => step.uses?.startsWith('actions/setup-node@'))!;
		expect(setup.with).toMatchObject({ 'registry-url': 'https://registry.npmjs.org' });
		expect(Number(setup.with!['node-version'])).toBeGreaterThanOrEqual(24);
		const order = [/^npm ci$/, /^npm run build$/, /^npm run scan$/, /npm run release/].map(index);
		expect(order.every((position) => position > 0)).toBe(true);
		expect([...order].sort((a, b) => a - b)).toEqual(order);
		expect(publishStep.env).toEqual({ NPM_TOKEN: '${{ secrets.NPM_TOKEN }}' });
	});

	it('refuses a tag that is not the package.json version', () => {
		const check = steps.find((step) => step.run?.includes('GITHUB_REF_NAME'))!.run!;
		const run = (tag: string) => spawnSync('bash', ['-e', '-c', check], { cwd: root, env: { ...shellEnv, GITHUB_REF_NAME: tag } });
		expect(run(manifest.version).status).toBe(0);
		expect(run('99.0.0').status).toBe(1);
	});

	it('publishes through `n8n-node release`, which on GitHub Actions lints, builds and runs npm publish with provenance', () => {
		expect(manifest.scripts.release).toBe('n8n-node release');
		expect(manifest.scripts.prepublishOnly).toBe('n8n-node prerelease');
		// The publish step as GitHub runs it (bash -e), with an npm that records what it is asked
		// to do instead of doing it, apart from `npm run release` itself.
		const shim = mkdtempSync(join(tmpdir(), 'clinic-publish-'));
		try {
			const calls = join(shim, 'calls.log');
			const realNpm = execFileSync('bash', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim();
			writeFileSync(
				join(shim, 'npm'),
				[
					'#!/usr/bin/env bash',
					`if [ "$1 $2" = "run release" ]; then exec "${realNpm}" "$@"; fi`,
					`echo "$* provenance=\${NPM_CONFIG_PROVENANCE:-} release_mode=\${RELEASE_MODE:-}" >> "${calls}"`,
				].join('\n'),
			);
			chmodSync(join(shim, 'npm'), 0o755);
			const run = spawnSync('bash', ['-e', '-c', publishStep.run!], {
				cwd: root,
				encoding: 'utf8',
				env: { ...shellEnv, PATH: `${shim}:${process.env.PATH}`, GITHUB_ACTIONS: 'true', NPM_TOKEN: '' },
				timeout: 120_000,
			});
			expect(run.status).toBe(0);
			expect(readFileSync(calls, 'utf8').trim().split('\n')).toEqual([
				'run lint provenance= release_mode=',
				'run build provenance= release_mode=',
				'publish provenance=true release_mode=true',
			]);
		} finally {
			rmSync(shim, { recursive: true, force: true });
		}
	}, 150_000);

	it('asks npm for provenance on every publish (publishConfig), a guard that needs no lifecycle script', () => {
		// .npmrc's ignore-scripts=true skips prepublishOnly (n8n-node prerelease) and prepack:
		// neither can stop a publish. publishConfig is read by npm itself; publish.test.ts
		// shows npm refusing outside CI and publishing the workflow's own build.
		expect(readFileSync(join(root, '.npmrc'), 'utf8')).toMatch(/^ignore-scripts=true$/m);
		expect(manifest.publishConfig).toEqual({ access: 'public', provenance: true });
		expect(manifest.scripts.build).toMatch(/^gulp clean && /);
	});
});

describe("the README's screenshots", () => {
	const readme = readFileSync(join(root, 'README.md'), 'utf8');
	const images = [...readme.matchAll(/!\[[^\]]*\]\((docs\/screenshots\/[^)]+)\)/g)].map((match) => match[1]);

	it('shows nine, from the browser test (the first a still frame of its demo video), as small PNGs in the repository', () => {
		expect(images).toHaveLength(9);
		expect(images[0]).toBe('docs/screenshots/demo.png');
		for (const image of images) {
			const bytes = readFileSync(join(root, image));
			expect([image, bytes.subarray(1, 4).toString('latin1')]).toEqual([image, 'PNG']);
			expect(bytes.length).toBeLessThan(250_000);
		}
	});
});
