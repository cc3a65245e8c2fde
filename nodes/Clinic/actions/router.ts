import { NodeApiError, NodeOperationError, sleep } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { WINDOW_CEILING } from '../../shared/hostLimiter';
import { ClinicClient, SIGN_IN_POLL_MS } from '../../shared/transport';
import type { Authentication } from '../../shared/transport';
import { ItemTurns, TurnCancelled } from './itemTurns';
import { resources } from './resources';
import { writeMode } from './writes';

type Operation = (this: IExecuteFunctions, itemIndex: number, client: ClinicClient) => Promise<INodeExecutionData[]>;

/**
 * Upper bound of "Parallel Requests": high enough to keep n8n busy while a slow service
 * answers (see WINDOW_CEILING), and no more: Automatic only gets there while the service
 * answers well, and a user who wants fewer connections sets a lower maximum.
 */
export const MAX_PARALLEL_REQUESTS = WINDOW_CEILING;

type Parallelism = 'automatic' | 'fixed';

interface Concurrency {
	/** Items that may hold a turn at once. */
	turns: number;
	/** What each request asks of the host's limiter. */
	hostLimit: { maximum: number; adaptive: boolean };
}

function clampParallel(value: unknown, fallback: number): number {
	return Math.min(Math.max(Math.floor(Number(value)) || fallback, 1), MAX_PARALLEL_REQUESTS);
}

/**
 * "Parallel Requests": Automatic (the default) lets the host's limiter find the pace, up to
 * the maximum, and sends writes that must not overlap one at a time; a fixed number is the
 * user's own choice for every operation. A workflow saved with only a number keeps it.
 */
function concurrencyOf(ctx: IExecuteFunctions, resource: string, operation: string): Concurrency {
	const options = ctx.getNodeParameter('options', 0, {}) as {
		parallelism?: Parallelism;
		parallelRequests?: number;
		maxParallelRequests?: number;
	};
	const parallelism = options.parallelism ?? (options.parallelRequests !== undefined ? 'fixed' : 'automatic');
	if (parallelism === 'fixed') {
		const fixed = clampParallel(options.parallelRequests, 1);
		return { turns: fixed, hostLimit: { maximum: fixed, adaptive: false } };
	}
	const maximum = clampParallel(options.maxParallelRequests, MAX_PARALLEL_REQUESTS);
	// One at a time by turns; the limiter still paces that one request with everyone else's.
	const turns = writeMode(resource, operation) === 'oneAtATime' ? 1 : maximum;
	return { turns, hostLimit: { maximum, adaptive: true } };
}

/** "items 1-3, 5 and 7" (1-based) */
function itemList(indexes: number[]): string {
	const sorted = [...indexes].sort((a, b) => a - b);
	const parts: string[] = [];
	for (let i = 0; i < sorted.length; ) {
		let j = i;
		while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
		if (j - i >= 2) parts.push(`${sorted[i] + 1}-${sorted[j] + 1}`);
		else for (let k = i; k <= j; k++) parts.push(`${sorted[k] + 1}`);
		i = j + 1;
	}
	const last = parts.pop();
	return `${parts.length ? `${parts.join(', ')} and ` : ''}${last ?? ''}`;
}

/**
 * What the error of a stopped run adds when earlier items already changed something:
 * their results are not passed on, and running again repeats them.
 */
function alreadySentNote(done: number[]): string {
	const which = `${done.length === 1 ? 'Item' : 'Items'} ${itemList(done)}`;
	return (
		`${which} had already been sent and done when the run stopped; their results are not passed on, ` +
		'and running the workflow again sends them again. To keep going past failed items, set the node\'s Settings → On Error to "Continue".'
	);
}

/** Items read ahead of their turn beyond twice Parallel Requests (and with Parallel Requests 1). */
const READ_AHEAD = 2;

/** Items whose parameters are read back to back before answers are handled again. */
const START_BATCH = 16;

/** Items read ahead while n8n signs in: about what n8n reads during a 100 ms sign-in. */
export const SIGN_IN_READ_AHEAD = 128;

function findOperation(ctx: IExecuteFunctions, resource: string, operation: string): Operation {
	const module = (resources as Record<string, { operations: Record<string, { execute: Operation }> }>)[resource];
	const found = module?.operations[operation]?.execute;
	if (!found) {
		throw new NodeOperationError(ctx.getNode(), `The operation "${operation}" of "${resource}" is not supported`);
	}
	return found;
}

/**
 * Runs every item through its operation. Items keep their order and pairing whatever the
 * parallelism; with "Continue On Fail" a failed item becomes an error item paired to its input.
 */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const authentication = this.getNodeParameter('authentication', 0, 'clinicApi') as Authentication;
	const publicBaseUrl = authentication === 'none' ? (this.getNodeParameter('baseUrl', 0, '') as string) : '';
	const execute = findOperation(this, resource, operation);
	const { turns: parallel, hostLimit } = concurrencyOf(this, resource, operation);
	const turns = new ItemTurns(parallel);
	const client = new ClinicClient(this, authentication, publicBaseUrl, async (itemIndex) => await turns.take(itemIndex), hostLimit);

	const results: INodeExecutionData[][] = new Array(items.length);
	let failure: { itemIndex: number; error: Error } | undefined;
	let next = 0;

	const runItem = async (itemIndex: number) => {
		try {
			const output = await execute.call(this, itemIndex, client);
			results[itemIndex] = this.helpers.constructExecutionMetaData(output, { itemData: { item: itemIndex } });
		} catch (error) {
			if (error instanceof TurnCancelled) return;
			if (this.continueOnFail()) {
				results[itemIndex] = [
					{
						json: {
							error: (error as Error).message,
							...((error as NodeApiError).description ? { details: (error as NodeApiError).description } : {}),
							...((error as NodeApiError).httpCode ? { httpCode: (error as NodeApiError).httpCode } : {}),
						},
						pairedItem: { item: itemIndex },
					},
				];
				return;
			}
			if (!failure || itemIndex < failure.itemIndex) failure = { itemIndex, error: error as Error };
			turns.stopAfter(itemIndex);
		} finally {
			turns.end(itemIndex);
		}
	};

	// Items start before their turn and read their parameters while earlier requests are on
	// the wire, a few at a time (back to back costs n8n less per item) with a pause between
	// batches, so that answers, and the first request's sign-in, are handled in between
	// instead of waiting for every item ahead to be read.
	const readAhead = 2 * parallel + READ_AHEAD;
	const batch = Math.min(START_BATCH, Math.max(1, Math.floor(parallel / 4)));
	const running = new Set<Promise<void>>();
	let wake: (() => void) | undefined;
	const start = (itemIndex: number) => {
		const run = runItem(itemIndex).finally(() => {
			running.delete(run);
			wake?.();
		});
		running.add(run);
	};
	for (;;) {
		// While n8n signs in, items are read while the sign-in is on the wire, but only so
		// many: n8n then stores the new token, which takes its thread several times, and
		// reading more items meanwhile would hold up every item's request.
		const signingIn = client.signingIn;
		const limit = signingIn ? Math.min(readAhead, SIGN_IN_READ_AHEAD) : readAhead;
		for (let started = 0; !failure && next < items.length && running.size < limit && started < batch; started++) start(next++);
		if (failure || next >= items.length) break;
		if (running.size < limit) await sleep(0);
		else if (signingIn) await sleep(SIGN_IN_POLL_MS);
		else await new Promise<void>((resolve) => (wake = resolve));
	}
	await Promise.all(running);

	if (failure) {
		const { itemIndex } = failure;
		const error =
			failure.error instanceof NodeApiError || failure.error instanceof NodeOperationError
				? failure.error
				: new NodeOperationError(this.getNode(), failure.error, { itemIndex });
		const done = writeMode(resource, operation) ? results.flatMap((output, index) => (output ? [index] : [])) : [];
		if (done.length > 0) error.description = [error.description, alreadySentNote(done)].filter(Boolean).join(' ');
		throw error;
	}
	return [results.flat()];
}
