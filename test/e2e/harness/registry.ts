/**
 * A private npm registry for the installer tests: verdaccio (a dev dependency) with no
 * uplinks, so n8n's installer can only get what the test published; storage in a temp
 * folder; a free port picked at start (verdaccio logs the address it was given, not the
 * one it bound, so it cannot pick its own); stopped by PID.
 *
 *   const registry = await startLocalRegistry(dir, { nodeBin });
 *   registry.publish(tarball);              // npm publish with a user of this registry
 *   await registry.stop();
 *
 * `retagTarball(tarball, version, outDir)` repacks a tarball with another version.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { REPO_ROOT } from './install';
import { readLog, spawnLogged, stopProcess, tailFile } from './processes';
import { fatal, waitFor } from './waitFor';
import { N8nHarnessError } from './context';
import { getFreePort } from './env';

export interface LocalRegistry {
	/** e.g. http://127.0.0.1:41234/ */
	url: string;
	pid: number;
	logFile: string;
	/** Publishes an `npm pack` tarball (npm publish, scripts ignored, no provenance). */
	publish(tarball: string): void;
	/** `npm view <spec> version` against this registry (what n8n's npm would resolve). */
	view(spec: string): string;
	stop(): Promise<void>;
}

/**
 * Starts verdaccio in `dir`, on the Node that runs the tests by default. It is pinned at
 * 5.20.1: every later 5.x (5.21.1 to 5.33.0, checked 2026-11-28) depends on a
 * `verdaccio-audit` that asks for `node-fetch@cjs`, a dist-tag the registry npm installs
 * from here does not carry, and pinning it would take an `overrides` field, which n8n's
 * package scanner refuses (`no-overrides-field`); 6.x needs Node 22. 5.20 signs tokens with
 * `crypto.createCipher`, gone in Node 22, so not on n8n's Node 24.
 */
export async function startLocalRegistry(dir: string, options: { nodeBin?: string } = {}): Promise<LocalRegistry> {
	mkdirSync(dir, { recursive: true });
	const config = join(dir, 'config.yaml');
	// No `uplinks`: a package that was not published here does not exist.
	writeFileSync(
		config,
		[
			`storage: ${join(dir, 'storage')}`,
			'auth:',
			'  htpasswd:',
			`    file: ${join(dir, 'htpasswd')}`,
			'    max_users: 10',
			'packages:',
			"  '**':",
			'    access: $all',
			'    publish: $authenticated',
			'    unpublish: $authenticated',
			'logs: { type: stdout, format: pretty, level: info }',
			'publish:',
			'  allow_offline: true',
			'',
		].join('\n'),
		'utf8',
	);
	const logFile = join(dir, 'verdaccio.log');
	const bin = join(REPO_ROOT, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
	const node = options.nodeBin ?? process.execPath;
	const port = await getFreePort();
	const child: ChildProcess = spawnLogged(node, [bin, '--config', config, '--listen', `127.0.0.1:${port}`], {
		env: { PATH: `${dirname(node)}:${process.env.PATH ?? ''}`, HOME: dir, NODE_ENV: 'production' },
		cwd: dir,
		logFile,
	});
	const stop = async () => await stopProcess(child, 5_000);
	let url: string;
	try {
		url = await waitFor(
			'verdaccio to listen',
			async () => {
				if (child.exitCode !== null || child.signalCode !== null) {
					throw fatal(new N8nHarnessError('verdaccio exited while starting', tailFile(logFile, 40)));
				}
				if (!/http address/.test(readLog(logFile))) return undefined;
				const response = await fetch(`http://127.0.0.1:${port}/-/ping`, { signal: AbortSignal.timeout(5_000) });
				return response.ok ? `http://127.0.0.1:${port}/` : undefined;
			},
			{ timeoutMs: 60_000, onTimeout: () => tailFile(logFile, 40) },
		);
	} catch (error) {
		await stop();
		throw error;
	}

	// A user of this registry: its token goes into a userconfig of the publishing npm only.
	const user = { name: 'clinic-publisher', password: 'clinic-publisher-password' };
	const response = await fetch(`${url}-/user/org.couchdb.user:${user.name}`, {
		method: 'PUT',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ _id: `org.couchdb.user:${user.name}`, name: user.name, password: user.password, type: 'user' }),
	});
	if (!response.ok) {
		await stop();
		throw new N8nHarnessError(`verdaccio refused the publishing user: ${response.status}`, tailFile(logFile, 20));
	}
	const { token } = (await response.json()) as { token: string };
	const userconfig = join(dir, 'publish.npmrc');
	const host = url.replace(/^http:/, '');
	writeFileSync(userconfig, `registry=${url}\n${host}:_authToken=${token}\n`, { mode: 0o600 });
	const npmEnv = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ''}`, npm_config_userconfig: userconfig };

	return {
		url,
		pid: child.pid!,
		logFile,
		publish(tarball: string) {
			// --provenance=false: the package's publishConfig asks for provenance, which npm signs
			// only on GitHub Actions; this registry is a local test double.
			execFileSync('npm', ['publish', tarball, '--registry', url, '--ignore-scripts', '--provenance=false', '--access', 'public', '--tag', 'latest'], {
				cwd: dir,
				env: npmEnv,
				stdio: 'pipe',
				timeout: 120_000,
			});
		},
		view(spec: string) {
			return execFileSync('npm', ['view', spec, 'version', '--registry', url], {
				cwd: dir,
				env: npmEnv,
				encoding: 'utf8',
				timeout: 60_000,
			}).trim();
		},
		stop,
	};
}

/** Repacks `tarball` with `version` in its package.json; returns the new tarball's path. */
export function retagTarball(tarball: string, version: string, outDir: string): string {
	const work = join(outDir, `retag-${version}`);
	rmSync(work, { recursive: true, force: true });
	mkdirSync(work, { recursive: true });
	execFileSync('tar', ['-xzf', tarball, '-C', work]);
	const manifestPath = join(work, 'package', 'package.json');
	const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { name: string; version: string };
	manifest.version = version;
	writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`, 'utf8');
	const out = join(outDir, `${manifest.name}-${version}.tgz`);
	execFileSync('tar', ['-czf', out, '-C', work, 'package']);
	rmSync(work, { recursive: true, force: true });
	return out;
}
