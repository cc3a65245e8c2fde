/**
 * A workflow's executions as the tests read them: listed without their data while waiting
 * (a list with data carries every run's data, and a look comes every 300 ms), read with
 * their data once the list says it is time.
 */
import type { RunExecutionData } from './cli';
import type { N8nServer } from './server';
import { waitFor } from './waitFor';

/** An execution as the public API returns it with includeData=true. */
export interface Execution {
	id: string | number;
	workflowId: string;
	mode: string;
	status: string;
	finished: boolean;
	startedAt: string;
	stoppedAt: string | null;
	data?: RunExecutionData | null;
	[key: string]: unknown;
}

/** The run is over: not running, not queued, not waiting. */
export const isFinished = (execution: Execution): boolean => !['running', 'new', 'waiting'].includes(execution.status);

/** "N execution(s), M not finished (id status, …)": what a timeout reports of the last look. */
export function describeExecutions(executions: Execution[]): string {
	const going = executions.filter((execution) => !isFinished(execution));
	return `${executions.length} execution(s), ${going.length} not finished (${going.map((e) => `${e.id} ${e.status}`).join(', ')})`;
}

export interface ReadWhen<T> {
	/** On the list without data: whether to read the executions with their data now. */
	ready: (listed: Execution[]) => boolean;
	/** On the executions with their data: the answer, or undefined to wait for the list to change. */
	pick: (executions: Execution[]) => T | undefined;
	timeoutMs: number;
	/** Added to the timeout's message, after the last look. */
	detail?: () => string;
}

/**
 * Lists the workflow's executions without their data until `ready`, then reads them with
 * their data and answers what `pick` makes of them. When `pick` answers undefined, the data
 * is read again only once the list changed (more executions, or some still going).
 */
export async function readExecutionsWhen<T>(server: N8nServer, workflowId: string, wanted: string, options: ReadWhen<T>): Promise<T> {
	let lastListing = 'nothing listed yet';
	let readWithData = -1;
	return await waitFor(
		wanted,
		async () => {
			const listed = await server.listExecutions(workflowId, { includeData: false });
			lastListing = describeExecutions(listed);
			if (!options.ready(listed) || listed.length === readWithData) return undefined;
			const executions = await server.listExecutions(workflowId);
			lastListing = describeExecutions(executions);
			readWithData = options.ready(executions) ? executions.length : -1;
			return options.pick(executions);
		},
		{ timeoutMs: options.timeoutMs, intervalMs: 300, onTimeout: () => [`listed last: ${lastListing}`, options.detail?.()].filter(Boolean).join('\n') },
	);
}
