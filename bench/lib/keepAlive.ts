/** The bare clients' common ground: a keep-alive pool with bounded concurrency, and answers read whole. */
import * as http from 'node:http';
import { performance } from 'node:perf_hooks';

/** Runs `task(agent, i)` for i in 0..count-1, at most `concurrency` at once; returns the wall time (ms). */
export async function keepAlivePool(
	count: number,
	concurrency: number,
	task: (agent: http.Agent, index: number) => Promise<void>,
): Promise<number> {
	const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
	let next = 0;
	const started = performance.now();
	const worker = async () => {
		while (next < count) await task(agent, next++);
	};
	try {
		await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
	} finally {
		agent.destroy();
	}
	return performance.now() - started;
}

/** The answer's body: parsed JSON, or the text when it is not JSON. */
export function readBody(res: http.IncomingMessage): Promise<unknown> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		res.on('data', (chunk: Buffer) => chunks.push(chunk));
		res.on('end', () => {
			const text = Buffer.concat(chunks).toString('utf8');
			try {
				resolve(JSON.parse(text));
			} catch {
				resolve(text); // not JSON
			}
		});
		res.on('error', reject);
	});
}
