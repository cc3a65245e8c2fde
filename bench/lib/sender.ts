/** POSTs many bodies to one URL with a keep-alive agent and bounded concurrency. */
import * as http from 'node:http';

import { keepAlivePool, readBody } from './keepAlive';

export interface Answer {
	status: number;
	body: unknown;
}

export interface SendResult {
	ms: number;
	answers: Answer[];
}

/** Never rejects: a failed send is an answer with status 0 and the reason as body. */
function post(agent: http.Agent, url: URL, body: Buffer, headers: Record<string, string>): Promise<Answer> {
	return new Promise((resolve) => {
		const req = http.request(
			url,
			{ method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) } },
			(res) => {
				readBody(res).then(
					(parsed) => resolve({ status: res.statusCode ?? 0, body: parsed }),
					() => resolve({ status: 0, body: 'response error' }),
				);
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
	/** Runs just before each body is sent (e.g. the service logging the event it delivers). */
	beforeSend?: (index: number) => void,
): Promise<SendResult> {
	const target = new URL(url);
	const answers: Answer[] = new Array(bodies.length);
	const ms = await keepAlivePool(bodies.length, concurrency, async (agent, index) => {
		beforeSend?.(index);
		answers[index] = await post(agent, target, bodies[index], headersOf(bodies[index]));
	});
	return { ms, answers };
}
