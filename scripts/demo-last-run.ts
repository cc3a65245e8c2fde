/**
 * `npm run demo:last`: the result of the flagship example's last run in the running demo
 * (`npm run demo`), read through n8n's public API: its status, then what each step did.
 */
import { readFileSync } from 'node:fs';

import { nodesThatRan, nodeJson } from '../test/e2e/harness/cli';
import type { Execution } from '../test/e2e/harness/executions';
import { DEMO_SESSION_FILE, type DemoSession } from './demo-session';

function summary(execution: Execution, node: string): string {
	const run = execution.data?.resultData?.runData?.[node]?.[0];
	if (run?.error) return `error: ${run.error.message}`;
	const items = nodeJson(execution, node);
	const first = items[0] ?? {};
	const facts = ['email_sent', 'id', 'signed_at', 'total_cents', 'fileName', 'name']
		.filter((key) => first[key] !== undefined)
		.map((key) => `${key} ${JSON.stringify(first[key])}`);
	return `${items.length} item${items.length === 1 ? '' : 's'}${facts.length ? ` (${facts.join(', ')})` : ''}`;
}

async function main(): Promise<void> {
	let session: DemoSession;
	try {
		session = JSON.parse(readFileSync(DEMO_SESSION_FILE, 'utf8')) as DemoSession;
	} catch {
		throw new Error('No demo is running here: start it with npm run demo');
	}
	const query = new URLSearchParams({ workflowId: session.workflowId, includeData: 'true', limit: '1' });
	const answer = await fetch(`${session.baseUrl}/api/v1/executions?${query.toString()}`, {
		headers: { 'x-n8n-api-key': session.apiKey },
	}).catch(() => undefined);
	if (!answer?.ok) throw new Error(`n8n at ${session.baseUrl} did not answer (is npm run demo still running?)`);
	const [last] = ((await answer.json()) as { data: Execution[] }).data;
	if (!last) {
		process.stdout.write(`"${session.workflowName}" has not run yet. Finish a consultation:\n  ${session.finishCommand}\n`);
		return;
	}
	process.stdout.write(`"${session.workflowName}", execution ${last.id}: ${last.status} (${last.stoppedAt ?? last.startedAt})\n`);
	const error = last.data?.resultData?.error;
	if (error) process.stdout.write(`  ${error.message}\n`);
	for (const node of nodesThatRan(last)) process.stdout.write(`  ${node}: ${summary(last, node)}\n`);
	process.stdout.write(`In the editor: ${session.baseUrl}/workflow/${session.workflowId}/executions/${last.id}\n`);
}

main().catch((error) => {
	process.stderr.write(`demo:last: ${error instanceof Error ? error.message : String(error)}\n`);
	process.exit(1);
});
