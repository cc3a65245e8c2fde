/**
 * Only the publish workflow can publish: the real npm client, on a clean clone of the
 * committed tree (node_modules linked), against a registry that records what it is sent.
 *
 * - As on a maintainer's laptop (a registry token in the user config, no CI): `npm publish` is
 *   refused by npm itself, because `publishConfig.provenance` asks for a provenance statement
 *   and npm signs one only on a CI with an OIDC identity. The repository's `.npmrc`
 *   (`ignore-scripts=true`) plays no part: no lifecycle script is involved.
 * - As on GitHub Actions (GITHUB_ACTIONS, the OIDC token endpoint, the workflow's own publish
 *   step): the package is built in that run (a stale file left in dist/ is gone, every file is
 *   written after the run's start), npm packs that build and asks GitHub's OIDC endpoint for a
 *   sigstore identity to sign its provenance. The endpoint here is a test double that refuses,
 *   so the publish stops there, before anything is uploaded. The same with lifecycle scripts
 *   on (NPM_CONFIG_IGNORE_SCRIPTS=false overriding .npmrc): the workflow needs neither setting.
 *
 * Nothing leaves the machine: the registry and the OIDC endpoint are this file's HTTP server.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

const root = join(__dirname, '..', '..');
const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();

interface Recorded {
	method: string;
	path: string;
	audience: string | null;
}

interface Run {
	code: number | null;
	output: string;
}

/** Runs a command without blocking this process (the recording server answers meanwhile). */
function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Run> {
	return new Promise((resolve) => {
		execFile(command, args, { ...options, encoding: 'utf8', timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
			const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
			resolve({ code, output: `${stdout}${stderr}`.replace(/\u001b\[[0-9;]*m/g, '') });
		});
	});
}

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir: string, prefix = ''): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory() ? filesUnder(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
	);
}

/** The files npm listed under "Tarball Contents" in its notices. */
function tarballContents(output: string): string[] {
	const block = output.split('Tarball Contents')[1]?.split('Tarball Details')[0] ?? '';
	return [...block.matchAll(/npm notice [\d.]+[kMG]?B (\S+)/g)].map((match) => match[1]);
}

describe('npm publish of a clean clone', () => {
	let work: string;
	let clone: string;
	let server: Server;
	let registry: string;
	let userconfig: string;
	let realNpm: string;
	const requests: Recorded[] = [];

	/** A shell with nothing of this one's CI, npm or jest variables: what npm sees is set here. */
	const baseEnv = (): NodeJS.ProcessEnv => ({
		PATH: process.env.PATH,
		HOME: join(work, 'home'),
		TMPDIR: tmpdir(),
		LANG: 'C.UTF-8',
		npm_config_userconfig: userconfig,
		npm_config_cache: join(work, 'npm-cache'),
		npm_config_update_notifier: 'false',
		npm_config_fund: 'false',
		npm_config_audit: 'false',
	});

	beforeAll(async () => {
		work = mkdtempSync(join(tmpdir(), 'clinic-publish-'));
		mkdirSync(join(work, 'home'));
		clone = join(work, 'clone');
		// The committed tree only (no dist/, nothing uncommitted); --shared reaches HEAD even
		// when no branch names it.
		execFileSync('git', ['clone', '--quiet', '--shared', '--no-checkout', root, clone]);
		execFileSync('git', ['checkout', '--quiet', '--detach', head], { cwd: clone });
		symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'));
		realNpm = execFileSync('bash', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim();

		// The registry (no package yet, uploads recorded) and GitHub's OIDC token endpoint,
		// which refuses every token: a sigstore identity cannot be had here.
		server = createServer((req, res) => {
			const url = new URL(req.url ?? '/', 'http://localhost');
			requests.push({ method: req.method ?? '', path: url.pathname, audience: url.searchParams.get('audience') });
			req.resume();
			res.setHeader('content-type', 'application/json');
			if (url.pathname === '/oidc/token') {
				res.statusCode = 403;
				res.end(JSON.stringify({ message: 'no OIDC token outside GitHub Actions' }));
			} else if (req.method === 'PUT') {
				res.statusCode = 201;
				res.end(JSON.stringify({ ok: true }));
			} else {
				res.statusCode = 404;
				res.end(JSON.stringify({ error: 'not found' }));
			}
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
		// What `npm login` leaves on a laptop, and setup-node plus a token in the workflow.
		userconfig = join(work, 'user.npmrc');
		writeFileSync(userconfig, `registry=${registry}\n${registry.replace(/^http:/, '')}:_authToken=a-maintainers-token\n`, { mode: 0o600 });
	}, 60_000);

	afterAll(async () => {
		await new Promise((resolve) => server?.close(resolve));
		if (work) rmSync(work, { recursive: true, force: true });
	});

	it('is refused outside CI, with a registry token at hand, before anything is uploaded', async () => {
		requests.length = 0;
		const result = await run('npm', ['publish'], { cwd: clone, env: baseEnv() });

		expect(result.code).not.toBe(0);
		expect(result.output).toContain('npm error code EUSAGE');
		expect(result.output).toContain('npm error Automatic provenance generation not supported for provider: null');
		expect(requests.filter((request) => request.method !== 'GET')).toEqual([]);
	}, 90_000);

	// The repository's .npmrc says ignore-scripts=true; the workflow must not depend on it.
	it.each([
		['true', []],
		// With scripts on, prepublishOnly (n8n-node prerelease) passes under RELEASE_MODE and
		// prepack builds once more, in the same run.
		['false', ['run build provenance=true release_mode=true']],
	])("on GitHub Actions (ignore-scripts=%s), the workflow's publish step builds the package in that run and asks to sign its provenance", async (ignoreScripts, lifecycleCalls) => {
		const workflow = parseYaml(readFileSync(join(clone, '.github', 'workflows', 'publish.yml'), 'utf8'));
		const step = (workflow.jobs.publish.steps as Array<{ run?: string; env?: Record<string, string> }>).find((entry) => entry.run?.includes('npm run release'))!;
		const version = JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')).version as string;

		// What an earlier build on the runner's disk could have left behind.
		rmSync(join(clone, 'dist'), { recursive: true, force: true });
		mkdirSync(join(clone, 'dist'));
		writeFileSync(join(clone, 'dist', 'stale-from-an-earlier-build.js'), 'module.exports = "stale";\n');
		const started = Date.now();

		// An npm that records each call and runs it, apart from `npm run lint`, which
		// verification.test.ts and `npm run lint` in the suite cover (and which takes longer
		// than this whole file).
		const shim = join(work, `bin-${ignoreScripts}`);
		const calls = join(work, `npm-calls-${ignoreScripts}.log`);
		mkdirSync(shim);
		writeFileSync(
			join(shim, 'npm'),
			[
				'#!/usr/bin/env bash',
				`echo "$* provenance=\${NPM_CONFIG_PROVENANCE:-} release_mode=\${RELEASE_MODE:-}" >> "${calls}"`,
				'if [ "$1 $2" = "run lint" ]; then exit 0; fi',
				`exec "${realNpm}" "$@"`,
			].join('\n'),
		);
		chmodSync(join(shim, 'npm'), 0o755);

		requests.length = 0;
		const result = await run('bash', ['-e', '-c', step.run!], {
			cwd: clone,
			env: {
				...baseEnv(),
				PATH: `${shim}:${process.env.PATH}`,
				// The step's own env, with no NPM_TOKEN secret (a trusted publisher's setup).
				...Object.fromEntries(Object.keys(step.env ?? {}).map((name) => [name, ''])),
				CI: 'true',
				GITHUB_ACTIONS: 'true',
				NPM_CONFIG_IGNORE_SCRIPTS: ignoreScripts,
				GITHUB_REF: `refs/tags/${version}`,
				GITHUB_REF_NAME: version,
				GITHUB_SHA: head,
				GITHUB_REPOSITORY: 'n8n-nodes-clinic/n8n-nodes-clinic',
				GITHUB_SERVER_URL: 'https://github.com',
				GITHUB_WORKFLOW_REF: `n8n-nodes-clinic/n8n-nodes-clinic/.github/workflows/publish.yml@refs/tags/${version}`,
				GITHUB_EVENT_NAME: 'push',
				RUNNER_ENVIRONMENT: 'github-hosted',
				// Present only in a job with `permissions: id-token: write`.
				ACTIONS_ID_TOKEN_REQUEST_URL: `${registry}oidc/token?api-version=2.0`,
				ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'a-runner-request-token',
			},
		});
		const output = result.output;
		if (process.env.SHOW_PUBLISH_OUTPUT) console.log(output);

		// `npm run release` (`n8n-node release`) on GitHub Actions: lint, build, then npm publish
		// with provenance.
		expect(readFileSync(calls, 'utf8').trim().split('\n')).toEqual([
			'run release provenance= release_mode=',
			'run lint provenance= release_mode=',
			'run build provenance= release_mode=',
			'publish provenance=true release_mode=true',
			...lifecycleCalls,
		]);

		// dist/ was built in this run: the stale file is gone and every file was written after the
		// start (ctime: gulp copies icons and schemas with their source's mtime).
		const built = filesUnder(join(clone, 'dist'));
		expect(built).not.toContain('stale-from-an-earlier-build.js');
		expect(built).toContain('nodes/Clinic/Clinic.node.js');
		const oldest = Math.min(...built.map((file) => statSync(join(clone, 'dist', file)).ctimeMs));
		expect(oldest).toBeGreaterThanOrEqual(started);

		// The tarball npm was about to publish is that build: npm listed its contents, and
		// packing the tree now gives the same shasum.
		const contents = tarballContents(output);
		expect(contents).toEqual(expect.arrayContaining(['dist/nodes/Clinic/Clinic.node.js', 'dist/credentials/ClinicApi.credentials.js', 'package.json']));
		expect(contents.filter((file) => file.includes('stale'))).toEqual([]);
		const shasum = output.match(/npm notice shasum: ([0-9a-f]{40})/)?.[1];
		const packed = JSON.parse(execFileSync(realNpm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: clone, env: baseEnv(), encoding: 'utf8' }))[0];
		expect(shasum).toBe(packed.shasum);
		expect(contents.sort()).toEqual((packed.files as Array<{ path: string }>).map((file) => file.path).sort());

		// The provenance request: npm asked GitHub's OIDC endpoint for a sigstore identity to sign
		// the statement with (npm 11.5 and later first ask for a trusted publisher's token for the
		// registry, audience npm:<host>). The double refused, so npm stopped with a signing error
		// and uploaded nothing.
		const audiences = requests.filter((request) => request.path === '/oidc/token').map((request) => request.audience);
		expect(audiences.filter((audience) => audience !== 'npm:127.0.0.1')).toEqual(['sigstore']);
		expect(output).toMatch(/npm error .*identity token/i);
		expect(result.code).not.toBe(0);
		expect(requests.filter((request) => request.method === 'PUT')).toEqual([]);
	}, 120_000);
});
