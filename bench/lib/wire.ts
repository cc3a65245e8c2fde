/**
 * The wire limit: a bare Node HTTP client with keep-alive in the benchmark process,
 * doing what the nodes do per item (one GET, read and parse the JSON answer) and
 * nothing else.
 */
import * as http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface WireResult {
	ms: number;
	statuses: Map<number, number>;
	bodies: unknown[];
}

function get(agent: http.Agent, url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
	return new Promise((resolve, reject) => {
		const req = http.get(url, { agent, headers }, (res) => {
			const chunks: Buffer[] = [];
			res.on('data', (chunk: Buffer) => chunks.push(chunk));
			res.on('end', () => {
				const text = Buffer.concat(chunks).toString('utf8');
				let body: unknown = text;
				try {
					body = JSON.parse(text);
				} catch {
					// not JSON: kept as text
				}
				resolve({ status: res.statusCode ?? 0, body });
			});
			res.on('error', reject);
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
	const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
	const statuses = new Map<number, number>();
	const bodies: unknown[] = new Array(count);
	let next = 0;
	const started = performance.now();
	const worker = async () => {
		while (next < count) {
			const index = next++;
			const { status, body } = await get(agent, urlOf(index), options.headers ?? {});
			statuses.set(status, (statuses.get(status) ?? 0) + 1);
			bodies[index] = body;
		}
	};
	try {
		await Promise.all(Array.from({ length: Math.min(options.concurrency, count) }, worker));
	} finally {
		agent.destroy();
	}
	return { ms: performance.now() - started, statuses, bodies };
}
