/**
 * The previous release, built from its own commit, as users got it from the registry.
 * `test/e2e/fixtures/previousRelease.json` names it (version and full commit sha; the
 * tag `v<version>` points there too, but a clean clone may not carry tags, so only the sha
 * is used).
 *
 *   const release = previousRelease();      // { version, commit }
 *   const tarball = packRelease(release);    // cached per commit: later runs are instant
 *
 * Packing: `git archive <commit>` into a temp folder, `npm run build` there, `npm pack`.
 * The build reuses this repository's node_modules (a symlink) when the release builds
 * with the same tools (typescript, gulp, n8n-workflow, @types/node at the same ranges):
 * about 5 s instead of a minute of `npm ci`. Otherwise `npm ci` in the temp folder.
 * A commit this clone does not hold (a shallow clone) is an error that says what to fetch:
 * the installer tests cannot test an update from a release they do not have.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { REPO_ROOT, cacheRoot } from './install';

export interface Release {
	version: string;
	/** Full sha of the release's commit. */
	commit: string;
}

export const PREVIOUS_RELEASE_FILE = join(REPO_ROOT, 'test', 'e2e', 'fixtures', 'previousRelease.json');

/** The tools `npm run build` uses: the same ranges let the release build with today's node_modules. */
const BUILD_TOOLS = ['typescript', 'gulp', 'n8n-workflow', '@types/node'];

interface Manifest {
	name: string;
	version: string;
	devDependencies?: Record<string, string>;
	n8n?: { nodes?: string[]; credentials?: string[] };
}

export function previousRelease(): Release {
	const release = JSON.parse(readFileSync(PREVIOUS_RELEASE_FILE, 'utf8')) as Release;
	if (!/^\d+\.\d+\.\d+$/.test(release.version) || !/^[0-9a-f]{40}$/.test(release.commit)) {
		throw new Error(`${PREVIOUS_RELEASE_FILE}: expected {"version": "x.y.z", "commit": "<40 hex digits>"}`);
	}
	return release;
}

function git(args: string[], options: { input?: Buffer } = {}): Buffer {
	return execFileSync('git', args, { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024, ...options });
}

/** Throws a message that says how to get the commit when this clone lacks it. */
export function requireCommit(release: Release): void {
	try {
		git(['cat-file', '-e', `${release.commit}^{commit}`]);
	} catch {
		throw new Error(
			`The previous release ${release.version} (commit ${release.commit}, named in ${PREVIOUS_RELEASE_FILE}) is not in this clone, ` +
				'so the update from it cannot be tested. A shallow clone lacks it: run `git fetch --unshallow` ' +
				`(or \`git fetch origin ${release.commit}\`), or clone with full history.`,
		);
	}
}

/** `<cache>/releases/<commit>/`: one packed tarball per release commit. */
export function releaseCacheDir(release: Release): string {
	return join(cacheRoot(), 'releases', release.commit);
}

function cachedTarball(dir: string): string | undefined {
	if (!existsSync(dir)) return undefined;
	const file = readdirSync(dir).find((name) => name.endsWith('.tgz'));
	return file ? join(dir, file) : undefined;
}

/** True when the release's build tools are the ones installed here (same ranges as today). */
function buildsWithTodaysModules(release: Manifest, today: Manifest): boolean {
	return BUILD_TOOLS.every((name) => {
		const wanted = release.devDependencies?.[name];
		return wanted !== undefined && wanted === today.devDependencies?.[name] && existsSync(join(REPO_ROOT, 'node_modules', name));
	});
}

/**
 * The release's `npm pack` tarball, built from its commit once and then taken from the
 * cache. Checks the tarball holds every node and credential its package.json names.
 */
export function packRelease(release: Release = previousRelease()): string {
	const cacheDir = releaseCacheDir(release);
	const cached = cachedTarball(cacheDir);
	if (cached) return cached;
	requireCommit(release);

	const work = mkdtempSync(join(tmpdir(), `clinic-release-${release.version}-`));
	try {
		const source = join(work, 'source');
		mkdirSync(source);
		execFileSync('tar', ['-x', '-C', source], { input: git(['archive', '--format=tar', release.commit]), maxBuffer: 256 * 1024 * 1024 });
		const manifest = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as Manifest;
		if (manifest.version !== release.version) {
			throw new Error(`Commit ${release.commit} is version ${manifest.version}, not ${release.version} (${PREVIOUS_RELEASE_FILE})`);
		}
		const today = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;
		const run = (args: string[]) =>
			execFileSync('npm', args, { cwd: source, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10 * 60_000 });
		const linked = buildsWithTodaysModules(manifest, today);
		if (linked) {
			symlinkSync(join(REPO_ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
		} else {
			run(['ci', '--no-audit', '--no-fund', '--ignore-scripts']);
		}
		run(['run', 'build']);
		const packDir = join(work, 'pack');
		mkdirSync(packDir);
		const info = JSON.parse(run(['pack', '--ignore-scripts', '--json', '--pack-destination', packDir])) as Array<{
			filename: string;
			files: Array<{ path: string }>;
		}>;
		const packed = new Set(info[0].files.map((file) => file.path));
		const missing = [...(manifest.n8n?.nodes ?? []), ...(manifest.n8n?.credentials ?? [])].filter((file) => !packed.has(file));
		if (missing.length > 0) throw new Error(`The packed ${release.version} lacks ${missing.join(', ')}`);

		const built = cachedTarball(packDir)!;
		mkdirSync(join(cacheRoot(), 'releases'), { recursive: true });
		// Moved in whole, so a cache folder never holds half a tarball.
		const staged = join(cacheRoot(), 'releases', `.${release.commit}-${process.pid}`);
		rmSync(staged, { recursive: true, force: true });
		mkdirSync(staged);
		copyFileSync(built, join(staged, built.slice(packDir.length + 1)));
		if (!cachedTarball(cacheDir)) {
			rmSync(cacheDir, { recursive: true, force: true });
			renameSync(staged, cacheDir);
		} else {
			rmSync(staged, { recursive: true, force: true });
		}
		return cachedTarball(cacheDir)!;
	} finally {
		// Unlinked first: removing the work folder must never reach the repository's own modules.
		const link = join(work, 'source', 'node_modules');
		if (existsSync(link) && lstatSync(link).isSymbolicLink()) unlinkSync(link);
		rmSync(work, { recursive: true, force: true });
	}
}
