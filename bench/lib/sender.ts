/** POSTs many bodies to one URL with a keep-alive agent and bounded concurrency. */
import * as http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface Answer {
	status: number;
	body: unknown;
}

export interface SendResult {
	ms: number;
	answers: Answer[];
}

function post(agent: http.Agent, url: URL, body: Buffer, headers: Record<string, string>): Promise<Answer> {
	return new Promise((resolve) => {
		const req = http.request(
			url,
			{ method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) } },
			(res) => {
				const chunks: Buffer[] = [];
				res.on('data', (chunk: Buffer) => chunks.push(chunk));
				res.on('end', () => {
					const text = Buffer.concat(chunks).toString('utf8');
					let parsed: unknown = text;
					try {
						parsed = JSON.parse(text);
					} catch {
						// not JSON
					}
					resolve({ status: res.statusCode ?? 0, body: parsed });
				});
				res.on('error', () => resolve({ status: 0, body: 'response error' }));
			},
		);
		req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
		req.on('error', (error) => resolve({ status: 0, body: error.message }));
		req.end(body);
	});
}

export async function sendAll(
	url: string,
	bodies: Buffer[],
	headersOf: (body: Buffer) => Record<string, string>,
	concurrency: number,
): Promise<SendResult> {
	const target = new URL(url);
	const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
	const answers: Answer[] = new Array(bodies.length);
	let next = 0;
	const started = performance.now();
	const worker = async () => {
		while (next < bodies.length) {
			const index = next++;
			answers[index] = await post(agent, target, bodies[index], headersOf(bodies[index]));
		}
	};
	try {
		await Promise.all(Array.from({ length: Math.min(concurrency, bodies.length) }, worker));
	} finally {
		agent.destroy();
	}
	return { ms: performance.now() - started, answers };
}
