/**
 * PostgreSQL and Redis for n8n's queue mode, found in this order:
 *   1. given:   N8N_E2E_POSTGRES_URL (postgres://user:password@host:port/database) and
 *               N8N_E2E_REDIS_URL (redis://[:password@]host:port); each context gets a
 *               fresh database there and its own Bull key prefix;
 *   2. private: started on free loopback ports from the installed binaries (PostgreSQL's
 *               under /usr/lib/postgresql/<v>/bin or on PATH, `redis-server`), data in a
 *               temp folder, stopped by PID; as root PostgreSQL runs as the `postgres` user
 *               (it refuses to run as root);
 *   3. installed from Debian's packages by scripts/install-queue-services.sh when
 *      running as root;
 *   otherwise an error says what to install.
 */
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

import { getFreePort } from './env';
import { REPO_ROOT } from './install';
import { spawnLogged, stopProcess, tailFile } from './processes';
import { waitFor } from './waitFor';

export interface PostgresTarget {
	host: string;
	port: number;
	user: string;
	password: string;
	database: string;
}

export interface RedisTarget {
	host: string;
	port: number;
	password?: string;
}

export interface QueueServices {
	postgres: PostgresTarget;
	redis: RedisTarget;
	/** Bull key prefix of this context (several test runs may share one given Redis). */
	bullPrefix: string;
	/** Where the services came from, for the test output. */
	origin: { postgres: 'given' | 'private'; redis: 'given' | 'private' };
	/** The DB_* and QUEUE_* variables for every n8n process of the context. */
	n8nEnv(): Record<string, string>;
	/** Stops the private instances (by PID) and removes their data. */
	stop(): Promise<void>;
}

export class QueueServicesError extends Error {
	constructor(message: string) {
		super(message);
		this.name = 'QueueServicesError';
	}
}

const INSTALL_HINT =
	'Install PostgreSQL and Redis (Debian: `apt-get install postgresql redis-server`, or run ' +
	'scripts/install-queue-services.sh as root), or point N8N_E2E_POSTGRES_URL and ' +
	'N8N_E2E_REDIS_URL at running servers.';

// ---------------------------------------------------------------------------- binaries

function postgresBinDir(): string | undefined {
	if (process.env.N8N_E2E_POSTGRES_BIN) return process.env.N8N_E2E_POSTGRES_BIN;
	const root = '/usr/lib/postgresql';
	if (existsSync(root)) {
		const versions = readdirSync(root)
			.filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
			.sort((a, b) => Number(b) - Number(a));
		if (versions.length > 0) return join(root, versions[0], 'bin');
	}
	const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
	if (onPath) {
		// /usr/local/bin/initdb may be a link into the real bin folder, where `postgres` is.
		const real = execFileSync('readlink', ['-f', onPath], { encoding: 'utf8' }).trim();
		return join(real, '..');
	}
	return undefined;
}

function redisServerBin(): string | undefined {
	const onPath = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim();
	if (onPath) return onPath;
	return existsSync('/usr/bin/redis-server') ? '/usr/bin/redis-server' : undefined;
}

/** Binaries of both servers, installing them first when missing and running as root. */
function findBinaries(): { postgresBin: string; redisBin: string } {
	let pg = postgresBinDir();
	let redis = redisServerBin();
	if ((!pg || !redis) && process.getuid?.() === 0) {
		execFileSync('bash', [join(REPO_ROOT, 'scripts', 'install-queue-services.sh')], {
			stdio: ['ignore', 'inherit', 'inherit'],
			timeout: 15 * 60_000,
		});
		pg = postgresBinDir();
		redis = redisServerBin();
	}
	const missing = [!pg && 'PostgreSQL (initdb, postgres)', !redis && 'Redis (redis-server)'].filter(Boolean);
	if (missing.length > 0) {
		throw new QueueServicesError(`Queue-mode tests need ${missing.join(' and ')}. ${INSTALL_HINT}`);
	}
	return { postgresBin: pg!, redisBin: redis! };
}

// ---------------------------------------------------------------------------- helpers

/** The unprivileged user PostgreSQL runs as when we are root. */
function postgresRunAs(): { uid: number; gid: number } | undefined {
	if (process.getuid?.() !== 0) return undefined;
	const out = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
	const gidOut = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
	if (out.status !== 0 || gidOut.status !== 0) {
		throw new QueueServicesError(
			'PostgreSQL refuses to run as root and there is no `postgres` user to run it as ' +
				'(Debian\'s postgresql package creates one). Create it, or set N8N_E2E_POSTGRES_URL.',
		);
	}
	return { uid: Number(out.stdout.trim()), gid: Number(gidOut.stdout.trim()) };
}

/** `pg` from n8n's own dependencies (n8n talks to PostgreSQL with it). */
type PgClient = { connect(): Promise<void>; query(sql: string): Promise<{ rows: Array<Record<string, unknown>> }>; end(): Promise<void> };
function pgClient(n8nDir: string, target: PostgresTarget, database = target.database): PgClient {
	const pg = require(join(n8nDir, 'node_modules', 'pg')) as { Client: new (config: object) => PgClient };
	return new pg.Client({ ...target, database, connectionTimeoutMillis: 5_000 });
}

/** Runs SQL against a PostgreSQL database with n8n's `pg` client. */
export async function postgresQuery(
	n8nDir: string,
	target: PostgresTarget,
	sql: string,
): Promise<Array<Record<string, unknown>>> {
	const client = pgClient(n8nDir, target);
	await client.connect();
	try {
		return (await client.query(sql)).rows;
	} finally {
		await client.end();
	}
}

function parseUrl(url: string, kind: string): URL {
	try {
		return new URL(url);
	} catch {
		throw new QueueServicesError(`${kind} is not a URL: expected e.g. postgres://user:password@127.0.0.1:5432/postgres`);
	}
}

// ---------------------------------------------------------------------------- private instances

async function startPrivatePostgres(binDir: string, logDir: string, children: ChildProcess[]): Promise<PostgresTarget> {
	const runAs = postgresRunAs();
	// Its own temp folder (not under the context's, which only root may enter).
	const dataRoot = mkdtempSync(join(tmpdir(), 'n8n-e2e-postgres-'));
	const dataDir = join(dataRoot, 'data');
	mkdirSync(dataDir);
	if (runAs) {
		chownSync(dataRoot, runAs.uid, runAs.gid);
		chownSync(dataDir, runAs.uid, runAs.gid);
	}
	const user = runAs ? 'postgres' : userInfo().username;
	const init = spawnSync(
		join(binDir, 'initdb'),
		['-D', dataDir, '-U', user, '--auth=trust', '--encoding=UTF8', '--no-sync', '--locale=C'],
		{ encoding: 'utf8', uid: runAs?.uid, gid: runAs?.gid, cwd: dataRoot, env: { PATH: process.env.PATH, LANG: 'C' } },
	);
	if (init.status !== 0) {
		rmSync(dataRoot, { recursive: true, force: true });
		throw new QueueServicesError(`initdb failed (exit ${init.status}):\n${init.stderr}${init.stdout}`);
	}
	const port = await getFreePort();
	const logFile = join(logDir, '00-postgres.log');
	const child = spawnLogged(
		join(binDir, 'postgres'),
		[
			'-D', dataDir,
			'-p', String(port),
			'-c', 'listen_addresses=127.0.0.1',
			'-c', `unix_socket_directories=${dataRoot}`,
			// A throw-away test database: durability off, room for every n8n process's pool.
			'-c', 'fsync=off',
			'-c', 'synchronous_commit=off',
			'-c', 'full_page_writes=off',
			'-c', 'max_connections=200',
		],
		{ env: { PATH: process.env.PATH, LANG: 'C' }, cwd: dataRoot, logFile, uid: runAs?.uid, gid: runAs?.gid },
	);
	children.push(child);
	child.once('exit', () => rmSync(dataRoot, { recursive: true, force: true }));
	return { host: '127.0.0.1', port, user, password: '', database: 'postgres' };
}

async function startPrivateRedis(bin: string, logDir: string, children: ChildProcess[]): Promise<RedisTarget> {
	const port = await getFreePort();
	const child = spawnLogged(
		bin,
		['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', logDir],
		{ env: { PATH: process.env.PATH }, cwd: logDir, logFile: join(logDir, '00-redis.log') },
	);
	children.push(child);
	return { host: '127.0.0.1', port };
}

async function redisPing(target: RedisTarget): Promise<boolean> {
	const { createConnection } = await import('node:net');
	return await new Promise((resolve) => {
		const socket = createConnection({ host: target.host, port: target.port });
		let answer = '';
		socket.setTimeout(2_000, () => socket.destroy());
		socket.on('connect', () => socket.write(target.password ? `AUTH ${target.password}\r\nPING\r\n` : 'PING\r\n'));
		socket.on('data', (chunk) => {
			answer += chunk.toString();
			if (answer.includes('+PONG')) {
				socket.end();
				resolve(true);
			}
		});
		socket.on('error', () => resolve(false));
		socket.on('close', () => resolve(answer.includes('+PONG')));
	});
}

// ---------------------------------------------------------------------------- entry point

/**
 * PostgreSQL and Redis for one queue-mode context: a fresh database named after the
 * context, logs of private instances in `logDir`. `n8nDir` is an n8n install folder
 * (its `pg` client creates the database).
 */
export async function startQueueServices(options: { n8nDir: string; logDir: string }): Promise<QueueServices> {
	const children: ChildProcess[] = [];
	const stop = async () => {
		await Promise.all(children.map(async (child) => await stopProcess(child, 10_000)));
	};
	try {
		const givenPg = process.env.N8N_E2E_POSTGRES_URL;
		const givenRedis = process.env.N8N_E2E_REDIS_URL;
		const binaries = !givenPg || !givenRedis ? findBinaries() : undefined;

		let server: PostgresTarget;
		if (givenPg) {
			const url = parseUrl(givenPg, 'N8N_E2E_POSTGRES_URL');
			server = {
				host: url.hostname,
				port: Number(url.port || 5432),
				user: decodeURIComponent(url.username || 'postgres'),
				password: decodeURIComponent(url.password),
				database: url.pathname.replace(/^\//, '') || 'postgres',
			};
		} else {
			server = await startPrivatePostgres(binaries!.postgresBin, options.logDir, children);
		}
		let redis: RedisTarget;
		if (givenRedis) {
			const url = parseUrl(givenRedis, 'N8N_E2E_REDIS_URL');
			redis = { host: url.hostname, port: Number(url.port || 6379), password: decodeURIComponent(url.password) || undefined };
		} else {
			redis = await startPrivateRedis(binaries!.redisBin, options.logDir, children);
		}

		const logs = () =>
			['00-postgres.log', '00-redis.log'].map((f) => `----- ${f}\n${tailFile(join(options.logDir, f), 20)}`).join('\n');
		const ready = (up: boolean) => (up ? true : undefined);
		await waitFor('PostgreSQL', async () => ready((await postgresQuery(options.n8nDir, server, 'SELECT 1')).length === 1), { timeoutMs: 30_000, intervalMs: 200, onTimeout: logs });
		await waitFor('Redis', async () => ready(await redisPing(redis)), { timeoutMs: 30_000, intervalMs: 200, onTimeout: logs });

		const suffix = randomBytes(4).toString('hex');
		const database = `n8n_e2e_${suffix}`;
		await postgresQuery(options.n8nDir, server, `CREATE DATABASE ${database}`);
		const postgres = { ...server, database };
		const bullPrefix = `bull-e2e-${suffix}`;

		return {
			postgres,
			redis,
			bullPrefix,
			origin: { postgres: givenPg ? 'given' : 'private', redis: givenRedis ? 'given' : 'private' },
			n8nEnv: () => ({
				DB_TYPE: 'postgresdb',
				DB_POSTGRESDB_HOST: postgres.host,
				DB_POSTGRESDB_PORT: String(postgres.port),
				DB_POSTGRESDB_DATABASE: postgres.database,
				DB_POSTGRESDB_USER: postgres.user,
				DB_POSTGRESDB_PASSWORD: postgres.password,
				EXECUTIONS_MODE: 'queue',
				QUEUE_BULL_REDIS_HOST: redis.host,
				QUEUE_BULL_REDIS_PORT: String(redis.port),
				...(redis.password ? { QUEUE_BULL_REDIS_PASSWORD: redis.password } : {}),
				QUEUE_BULL_PREFIX: bullPrefix,
			}),
			stop: async () => {
				if (givenPg) {
					await postgresQuery(options.n8nDir, server, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
				}
				await stop();
			},
		};
	} catch (error) {
		await stop();
		throw error;
	}
}
