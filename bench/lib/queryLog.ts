/**
 * n8n's own query log (TypeORM's console logger, on with DB_LOGGING_ENABLED=true and
 * DB_LOGGING_OPTIONS=all; see @n8n/config `database.config.js` and @n8n/db
 * `db-connection-options.js`), read from the `n8n start` log between two byte offsets, and
 * the statements counted by kind and table. TypeORM writes each statement as
 * `query: <sql> -- PARAMETERS: [...]` (parameters only when there are some) and a failed one
 * as `query failed: <sql>` followed by `error: ...`.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';

export const DB_LOGGING_ENV = {
	DB_LOGGING_ENABLED: 'true',
	// One of n8n's values (its config refuses a list): 'all' logs failed statements too.
	DB_LOGGING_OPTIONS: 'all',
	// Off: no "query is slow" lines (they would repeat statements already logged).
	DB_LOGGING_MAX_EXECUTION_TIME: '0',
};

export type Kind = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE' | 'other';
export const KINDS: Kind[] = ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'other'];

export interface Statement {
	kind: Kind;
	/** e.g. `credentials_entity`, `workflow_entity (SET staticData)`, `BEGIN TRANSACTION`. */
	target: string;
	failed: boolean;
	/** The SQL without its parameters. */
	sql: string;
}

export interface QueryCounts {
	total: number;
	failed: number;
	byKind: Record<Kind, number>;
	/** `KIND target` -> statements. */
	byTarget: Map<string, number>;
}

/** Current size of a log file: where the next window starts or ends. */
export function logOffset(file: string): number {
	return statSync(file).size;
}

/** The bytes of `file` between two offsets, as text. */
export function readLogSlice(file: string, from: number, to: number): string {
	const length = Math.max(0, to - from);
	const buffer = Buffer.alloc(length);
	const fd = openSync(file, 'r');
	try {
		let read = 0;
		while (read < length) {
			const n = readSync(fd, buffer, read, length - read, from + read);
			if (n === 0) break;
			read += n;
		}
		return buffer.subarray(0, read).toString('utf8');
	} finally {
		closeSync(fd);
	}
}

const STATEMENT_START = /^query( failed)?: /;
const PARAMETERS = ' -- PARAMETERS: ';

function quoted(sql: string, after: RegExp): string | undefined {
	return after.exec(sql)?.[1];
}

/** What a statement reads or writes: its table (and for an UPDATE the columns it sets). */
function classify(sql: string): { kind: Kind; target: string } {
	const word = sql.trimStart().split(/\s+/, 1)[0]?.toUpperCase() ?? '';
	if (word === 'SELECT' || word === 'WITH') return { kind: 'SELECT', target: quoted(sql, /\bFROM\s+"(\w+)"/i) ?? '(no table)' };
	if (word === 'INSERT') return { kind: 'INSERT', target: quoted(sql, /\bINTO\s+"(\w+)"/i) ?? '(no table)' };
	if (word === 'DELETE') return { kind: 'DELETE', target: quoted(sql, /\bFROM\s+"(\w+)"/i) ?? '(no table)' };
	if (word === 'UPDATE') {
		const table = quoted(sql, /^\s*UPDATE\s+"(\w+)"/i) ?? '(no table)';
		const set = /\bSET\s+(.*?)(?:\s+WHERE\b|$)/is.exec(sql)?.[1] ?? '';
		const columns = [...set.matchAll(/"(\w+)"\s*=/g)].map((m) => m[1]);
		return { kind: 'UPDATE', target: columns.length ? `${table} (SET ${columns.slice(0, 4).join(', ')}${columns.length > 4 ? ', ...' : ''})` : table };
	}
	return { kind: 'other', target: sql.trim().split('\n', 1)[0].split(/\s+/).slice(0, 2).join(' ').toUpperCase() };
}

/** The statements of a log slice, in order. */
export function parseStatements(text: string): Statement[] {
	const statements: Statement[] = [];
	let current: { failed: boolean; sql: string; closed: boolean } | undefined;
	const flush = () => {
		if (!current) return;
		const sql = current.sql.split(PARAMETERS)[0];
		statements.push({ ...classify(sql), failed: current.failed, sql });
		current = undefined;
	};
	for (const line of text.split('\n')) {
		const start = STATEMENT_START.exec(line);
		if (start) {
			flush();
			current = { failed: start[1] !== undefined, sql: line.slice(start[0].length), closed: line.includes(PARAMETERS) };
		} else if (current && !current.closed && (/^\s/.test(line) || line.includes(PARAMETERS)) && line.trim() !== '' && current.sql.length < 4000) {
			// A statement written over several (indented) lines: its parameters end it.
			current.sql += `\n${line}`;
			current.closed = line.includes(PARAMETERS);
		} else {
			flush();
		}
	}
	flush();
	return statements;
}

export function countStatements(statements: Statement[]): QueryCounts {
	const byKind = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>;
	const byTarget = new Map<string, number>();
	for (const s of statements) {
		byKind[s.kind] += 1;
		const key = `${s.kind} ${s.target}`;
		byTarget.set(key, (byTarget.get(key) ?? 0) + 1);
	}
	return { total: statements.length, failed: statements.filter((s) => s.failed).length, byKind, byTarget };
}
