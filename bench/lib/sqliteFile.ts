/**
 * Read-only queries on a running n8n's SQLite file, from outside n8n: nothing asked this way
 * goes through n8n (its query log and its connection pool never see it). The benchmark
 * process may run an older Node, so each query runs in n8n's own Node 24 (`node:sqlite`), in
 * a short-lived child process (asynchronously: the simulator keeps answering meanwhile).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import type { N8nContext } from './n8n';

const run = promisify(execFile);

const SCRIPT = `
const { DatabaseSync } = require('node:sqlite');
const [file, sql, params] = process.argv.slice(1);
const db = new DatabaseSync(file, { readOnly: true, timeout: 10000 });
const rows = db.prepare(sql).all(...JSON.parse(params));
db.close();
process.stdout.write(JSON.stringify(rows, (_key, value) => (typeof value === 'bigint' ? Number(value) : value)));
`;

export type Row = Record<string, string | number | null>;

export class SqliteFile {
	constructor(
		private readonly nodeBin: string,
		readonly file: string,
	) {}

	/** The SQLite file of the context's n8n (n8n's default `DB_SQLITE_DATABASE`). */
	static of(ctx: N8nContext): SqliteFile {
		return new SqliteFile(ctx.install.nodeBin, join(ctx.userFolder, '.n8n', 'database.sqlite'));
	}

	async query(sql: string, params: Array<string | number> = []): Promise<Row[]> {
		const { stdout } = await run(this.nodeBin, ['--no-warnings', '-e', SCRIPT, this.file, sql, JSON.stringify(params)], { maxBuffer: 64 * 1024 * 1024 });
		return JSON.parse(stdout) as Row[];
	}
}

export interface ExecutionsSince {
	finished: number;
	/** new, running, waiting */
	pending: number;
}

/** A workflow's executions with an id above `afterId`, by whether they finished. */
export async function executionsSince(db: SqliteFile, workflowId: string, afterId: number): Promise<ExecutionsSince> {
	const rows = await db.query('SELECT status, COUNT(*) AS n FROM execution_entity WHERE workflowId = ? AND id > ? GROUP BY status', [workflowId, afterId]);
	const count = (statuses: string[]) => rows.filter((r) => statuses.includes(String(r.status))).reduce((sum, r) => sum + Number(r.n), 0);
	return { finished: count(['success', 'error', 'crashed', 'canceled']), pending: count(['new', 'running', 'waiting']) };
}

/** The newest execution id in the file (0 when none). */
export async function lastExecutionId(db: SqliteFile): Promise<number> {
	return Number((await db.query('SELECT COALESCE(MAX(id), 0) AS id FROM execution_entity'))[0]?.id ?? 0);
}

export interface StoredExecution {
	id: number;
	status: string;
	/** Bytes of `execution_data.data` (the run data, n8n's flatted JSON). */
	dataBytes: number;
	/** Bytes of `execution_data.workflowData` (the workflow as it ran). */
	workflowBytes: number;
}

/** What the database holds for each of a workflow's executions with an id above `afterId`. */
export async function storedExecutions(db: SqliteFile, workflowId: string, afterId: number): Promise<StoredExecution[]> {
	const rows = await db.query(
		'SELECT e.id AS id, e.status AS status, LENGTH(CAST(d.data AS BLOB)) AS dataBytes, LENGTH(CAST(d.workflowData AS BLOB)) AS workflowBytes ' +
			'FROM execution_entity e LEFT JOIN execution_data d ON d.executionId = e.id WHERE e.workflowId = ? AND e.id > ? ORDER BY e.id',
		[workflowId, afterId],
	);
	return rows.map((r) => ({ id: Number(r.id), status: String(r.status), dataBytes: Number(r.dataBytes ?? 0), workflowBytes: Number(r.workflowBytes ?? 0) }));
}

/** Bytes of the workflow's static data as stored (`workflow_entity.staticData`). */
export async function staticDataBytes(db: SqliteFile, workflowId: string): Promise<number> {
	const rows = await db.query('SELECT LENGTH(CAST(staticData AS BLOB)) AS bytes FROM workflow_entity WHERE id = ?', [workflowId]);
	return Number(rows[0]?.bytes ?? 0);
}
