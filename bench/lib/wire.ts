/**
 * The wire limit: a bare Node HTTP client with keep-alive in the benchmark process,
 * doing what the nodes do per item (one GET, read and parse the JSON answer) and
 * nothing else.
 */
import * as http from 'node:http';

import { keepAlivePool, readBody } from './keepAlive';

export interface WireResult {
	ms: number;
	statuses: Map<number, number>;
	bodies: unknown[];
}

function get(agent: http.Agent, url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
	return new Promise((resolve, reject) => {
		const req = http.get(url, { agent, headers }, (res) => {
			readBody(res).then((body) => resolve({ status: res.statusCode ?? 0, body }), reject);
		});
		req.on('error', reject);
	});
}

/** `count` GETs of `urlOf(i)`, at most `concurrency` in flight on keep-alive connections. */
export async function wireRun(
	count: number,
	urlOf: (index: number) => string,
	options: { concurrency: number; headers?: Record<string, string> },
): Promise<WireResult> {
	const statuses = new Map<number, number>();
	const bodies: unknown[] = new Array(count);
	const ms = await keepAlivePool(count, options.concurrency, async (agent, index) => {
		const { status, body } = await get(agent, urlOf(index), options.headers ?? {});
		statuses.set(status, (statuses.get(status) ?? 0) + 1);
		bodies[index] = body;
	});
	return { ms, statuses, bodies };
}
