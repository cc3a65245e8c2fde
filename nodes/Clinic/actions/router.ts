import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { timeoutMsOf } from '../../shared/timeoutOption';
import { ClinicClient, authenticationOf } from '../../shared/transport';
import { operationTitle, resources } from './resources';
import { ItemScheduler, TurnCancelled } from './scheduler';
import { writeMode } from './writes';


type Operation = (this: IExecuteFunctions, itemIndex: number, client: ClinicClient) => Promise<INodeExecutionData[]>;

/** "items 1-3, 5 and 7" (1-based) */
function itemList(indexes: number[]): string {
	const parts: string[] = [];
	for (let i = 0; i < indexes.length; ) {
		let j = i;
		while (j + 1 < indexes.length && indexes[j + 1] === indexes[j] + 1) j++;
		if (j - i >= 2) parts.push(`${indexes[i] + 1}-${indexes[j] + 1}`);
		else parts.push(...indexes.slice(i, j + 1).map((k) => `${k + 1}`));
		i = j + 1;
	}
	const last = parts.pop();
	return `${parts.length ? `${parts.join(', ')} and ` : ''}${last ?? ''}`;
}

/** What a stopped run's error adds when earlier items already changed something at the service. */
function alreadySentNote(done: number[], stoppedByUser = false): string {
	const sent = `${done.length === 1 ? 'Item' : 'Items'} ${itemList(done)} had already been sent and done when the run stopped; their results are not passed on, `;
	if (stoppedByUser) return `${sent}and running the workflow again sends them again.`;
	return `${sent}and running the workflow again sends them again. To keep going past failed items, set the node's Settings → On Error to "Continue".`;
}

function errorItem({ message, description, httpCode }: NodeApiError, itemIndex: number): INodeExecutionData {
	return { json: { error: message, ...(description ? { details: description } : {}), ...(httpCode ? { httpCode } : {}) }, pairedItem: { item: itemIndex } };
}

/**
 * Runs every item through its operation. Items keep their order and pairing whatever the
 * parallelism; with "Continue On Fail" a failed item becomes an error item paired to its
 * input; otherwise the run stops at the first failed item (in input order).
 */
export async function router(this: IExecuteFunctions, { continueOnFail }: { continueOnFail: boolean }): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const module = (resources as Record<string, { operations: Record<string, { execute: Operation }> }>)[resource];
	const execute = module?.operations[operation]?.execute;
	if (!execute) throw new NodeOperationError(this.getNode(), `The operation "${operation}" of "${resource}" is not supported`);
	const authentication = authenticationOf(this);
	const scheduler = new ItemScheduler(this, resource, operation);
	const client = new ClinicClient(this, authentication, {
		publicBaseUrl: authentication === 'none' ? (this.getNodeParameter('baseUrl', 0, '') as string) : '',
		gate: scheduler,
		timeoutMs: timeoutMsOf(this.getNodeParameter('options', 0, {}) as IDataObject),
		operation: operationTitle(resource, operation),
	});

	const results: INodeExecutionData[][] = new Array(items.length);
	let failure: { itemIndex: number; error: Error } | undefined;
	await scheduler.forEachItem(items.length, async (itemIndex) => {
		try {
			const output = await execute.call(this, itemIndex, client);
			results[itemIndex] = this.helpers.constructExecutionMetaData(output, { itemData: { item: itemIndex } });
		} catch (error) {
			if (error instanceof TurnCancelled) return;
			if (continueOnFail) {
				results[itemIndex] = [errorItem(error as NodeApiError, itemIndex)];
				return;
			}
			if (!failure || itemIndex < failure.itemIndex) failure = { itemIndex, error: error as Error };
			scheduler.stopAfter(itemIndex);
		}
	});

	if (scheduler.cancelled) {
		// Requests in flight are cut off by the stop itself: their failure is not the item's.
		const write = writeMode(resource, operation) !== undefined;
		const done = write ? results.flatMap((output, index) => (output ? [index] : [])) : [];
		const cutOff = write && failure ? ` Item ${failure.itemIndex + 1} was being sent: check it at the service before running it again.` : '';
		throw new NodeOperationError(this.getNode(), 'The execution was stopped before every item was sent', {
			description: (done.length > 0 ? alreadySentNote(done, true) : '') + cutOff || undefined,
		});
	}
	if (failure) {
		const error =
			failure.error instanceof NodeApiError || failure.error instanceof NodeOperationError
				? failure.error
				: new NodeOperationError(this.getNode(), failure.error, { itemIndex: failure.itemIndex });
		const done = writeMode(resource, operation) ? results.flatMap((output, index) => (output ? [index] : [])) : [];
		if (done.length > 0) error.description = [error.description, alreadySentNote(done)].filter(Boolean).join(' ');
		throw error;
	}
	return [results.flat()];
}
