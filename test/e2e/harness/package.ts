/**
 * Installing a community package the way n8n's Settings → Community Nodes screen does
 * (n8n 2.41 `CommunityPackagesService.downloadPackage`, same on 1.123): unpack the
 * `npm pack` tarball into `<user folder>/.n8n/nodes/node_modules/<name>`, drop dev, peer
 * and optional dependencies from its package.json, `npm install --ignore-scripts` there,
 * and record the dependency in `<user folder>/.n8n/nodes/package.json`. At start n8n
 * scans `nodes/node_modules`, so the node types load as `<name>.<node>`, exactly as in
 * users' saved workflows. (The screen also writes the installed_packages table; n8n loads
 * the package without it.)
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface InstalledPackage {
	name: string;
	version: string;
	/** `<user folder>/.n8n/nodes/node_modules/<name>` */
	dir: string;
}

export interface InstallPackageOptions {
	/** Node binary put first on PATH for npm (n8n runs npm with its own Node). */
	nodeBin?: string;
	/** Timeout of `npm install` (default 5 minutes). */
	timeoutMs?: number;
}

/** `<user folder>/.n8n/nodes`: n8n's download folder for community packages. */
export function nodesFolder(userFolder: string): string {
	return join(userFolder, '.n8n', 'nodes');
}

export function installPackage(
	userFolder: string,
	tarballPath: string,
	options: InstallPackageOptions = {},
): InstalledPackage {
	const downloadFolder = nodesFolder(userFolder);
	const staging = join(downloadFolder, '.staging');
	rmSync(staging, { recursive: true, force: true });
	mkdirSync(staging, { recursive: true });
	execFileSync('tar', ['-xzf', tarballPath, '-C', staging, '--strip-components=1'], { stdio: 'pipe' });

	const manifestPath = join(staging, 'package.json');
	const {
		devDependencies: _dev,
		peerDependencies: _peer,
		optionalDependencies: _optional,
		...manifest
	} = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown> & {
		name: string;
		version: string;
	};
	writeFileSync(manifestPath, JSON.stringify(manifest, null, 2), 'utf8');

	const dir = join(downloadFolder, 'node_modules', manifest.name);
	rmSync(dir, { recursive: true, force: true });
	mkdirSync(dirname(dir), { recursive: true });
	execFileSync('mv', [staging, dir]);

	const env: NodeJS.ProcessEnv = { ...process.env, npm_config_ignore_scripts: 'true' };
	if (options.nodeBin) env.PATH = `${dirname(options.nodeBin)}:${process.env.PATH ?? ''}`;
	execFileSync(
		'npm',
		[
			'install',
			'--audit=false',
			'--fund=false',
			'--bin-links=false',
			'--install-strategy=shallow',
			'--ignore-scripts=true',
			'--package-lock=false',
		],
		{ cwd: dir, env, stdio: 'pipe', timeout: options.timeoutMs ?? 5 * 60_000 },
	);

	const ledgerPath = join(downloadFolder, 'package.json');
	const ledger = existsSync(ledgerPath)
		? (JSON.parse(readFileSync(ledgerPath, 'utf8')) as { dependencies?: Record<string, string> })
		: {};
	const dependencies = { ...(ledger.dependencies ?? {}), [manifest.name]: manifest.version };
	writeFileSync(
		ledgerPath,
		JSON.stringify({ name: 'installed-nodes', private: true, ...ledger, dependencies }, null, 2),
		'utf8',
	);
	return { name: manifest.name, version: manifest.version, dir };
}

/** Every file under `dir` whose name ends in `.node` (a compiled native module). */
export function nativeModules(dir: string): string[] {
	return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.node'));
}

/**
 * The package installed as docs/queue-mode.md tells operators to for an image or a worker:
 * `npm install --prefix ~/.n8n/nodes n8n-nodes-clinic` (here with the packed tarball for the
 * name). Nothing is dropped from its package.json: npm itself leaves the optional peer out.
 * Throws when the install brought a native module (a compile, and a failure on musl images).
 */
export function installWithNpm(userFolder: string, tarballPath: string, options: InstallPackageOptions = {}): InstalledPackage {
	const downloadFolder = nodesFolder(userFolder);
	mkdirSync(downloadFolder, { recursive: true });
	const env: NodeJS.ProcessEnv = { ...process.env };
	if (options.nodeBin) env.PATH = `${dirname(options.nodeBin)}:${process.env.PATH ?? ''}`;
	execFileSync('npm', ['install', '--prefix', downloadFolder, '--audit=false', '--fund=false', tarballPath], {
		env,
		stdio: 'pipe',
		timeout: options.timeoutMs ?? 5 * 60_000,
	});
	const { name, version } = JSON.parse(execFileSync('tar', ['-xzOf', tarballPath, 'package/package.json'], { encoding: 'utf8' })) as {
		name: string;
		version: string;
	};
	const native = nativeModules(join(downloadFolder, 'node_modules'));
	if (native.length > 0) throw new Error(`npm install --prefix ${downloadFolder} brought native modules: ${native.join(', ')}`);
	return { name, version, dir: join(downloadFolder, 'node_modules', name) };
}
