import { NodeApiError, NodeOperationError, sleep } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { ClinicClient } from '../../shared/transport';
import { withGetBodies } from '../../shared/webhookService';
import type { Authentication } from '../../shared/transport';
import { ItemTurns, TurnCancelled } from './itemTurns';
import { resources } from './resources';

type Operation = (this: IExecuteFunctions, itemIndex: number, client: ClinicClient) => Promise<INodeExecutionData[]>;

/**
 * Upper bound of "Parallel Requests": high enough to keep n8n busy while a slow service
 * answers, low enough that one node cannot open hundreds of connections to the clinic.
 */
export const MAX_PARALLEL_REQUESTS = 64;

/** Items read ahead of their turn below which the next batch starts. */
const READ_AHEAD = 2;

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
	const parallel = Math.min(
		Math.max(Math.floor(this.getNodeParameter('options.parallelRequests', 0, 1) as number) || 1, 1),
		MAX_PARALLEL_REQUESTS,
	);
	const execute = findOperation(this, resource, operation);
	const turns = new ItemTurns(parallel);
	// withGetBodies: GET /events carries its parameters in a JSON body, which n8n's httpRequest drops.
	const client = new ClinicClient(withGetBodies(this), authentication, publicBaseUrl, async (itemIndex) => await turns.take(itemIndex));

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
	// the wire. Batches after the first start after a timer: requests whose turn came leave first,
	// and n8n evaluates the next expressions back to back, which costs it less per item.
	const batch = Math.max(1, Math.floor(parallel / 4));
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
		while (!failure && next < items.length && running.size < parallel + READ_AHEAD + batch) start(next++);
		while (!failure && running.size > parallel + READ_AHEAD) await new Promise<void>((resolve) => (wake = resolve));
		if (failure || next >= items.length) break;
		await sleep(0);
	}
	await Promise.all(running);

	if (failure) {
		const { error, itemIndex } = failure;
		if (error instanceof NodeApiError || error instanceof NodeOperationError) throw error;
		throw new NodeOperationError(this.getNode(), error, { itemIndex });
	}
	return [results.flat()];
}
