/** Counting a workflow's executions by status through n8n's executions list (main's REST API). */
import type { N8nServer } from '../../test/e2e/harness';

export interface ExecutionCounts {
	success: number;
	failed: number;
	/** Not finished yet: new (queued), running, waiting. */
	pending: number;
}

/** A workflow's executions by status, from n8n's executions list (its `count`). */
export async function executionCounts(server: N8nServer, workflowId: string): Promise<ExecutionCounts> {
	const count = async (status: string[]) => {
		const filter = encodeURIComponent(JSON.stringify({ workflowId, status }));
		return (await server.rest<{ count: number }>('GET', `/executions?filter=${filter}&limit=1`)).count;
	};
	const [success, failed, pending] = await Promise.all([
		count(['success']),
		count(['error', 'crashed', 'canceled']),
		count(['new', 'running', 'waiting']),
	]);
	return { success, failed, pending };
}

/**
 * Waits until `expected` executions have finished (successfully or not) and none is
 * pending; gives up after `timeoutMs` and returns what it saw then.
 */
export async function settle(
	server: N8nServer,
	workflowId: string,
	expected: number,
	timeoutMs: number,
): Promise<ExecutionCounts & { settled: boolean }> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		let counts: ExecutionCounts;
		try {
			counts = await executionCounts(server, workflowId);
		} catch (error) {
			// n8n 1.x under a burst on sqlite: "Database connection timed out", then 503
			// "Database is not ready!" for a while. It recovers; the count is asked again.
			if (Date.now() > deadline || !/Database is not ready/.test((error as Error).message)) throw error;
			await new Promise((resolve) => setTimeout(resolve, 1000));
			continue;
		}
		const settled = counts.success + counts.failed >= expected && counts.pending === 0;
		if (settled || Date.now() > deadline) return { ...counts, settled };
		await new Promise((resolve) => setTimeout(resolve, 250));
	}
}

