/**
 * The benchmark workflows: Manual Trigger -> Code node making the input items -> the
 * measured node. Only the measured node is timed (its executionTime in the run data).
 */
import { passwordCredentialData } from '../../test/simulator';
import type { CredentialImport, WorkflowImport } from './n8n';
import { newN8nId } from './n8n';

export const MEASURED = 'Measured';
export const CLINIC_NODE_TYPE = 'n8n-nodes-clinic.clinic';
export const CLINIC_TRIGGER_TYPE = 'n8n-nodes-clinic.clinicTrigger';

type NodeJson = WorkflowImport['nodes'][number];

/** A node without its place in a workflow (name, id, position). */
export interface NodeSpec {
	type: string;
	typeVersion: number;
	parameters: Record<string, unknown>;
	[key: string]: unknown;
}

function place(spec: NodeSpec, name: string, position: [number, number]): NodeJson {
	return { ...spec, id: newN8nId(), name, position };
}

const MANUAL: NodeSpec = { type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} };

/** n8n's No Operation node: the items pass through; for baselines of n8n's own cost. */
export const NO_OP_NODE: NodeSpec = { type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {} };

/** n8n's Code node (JavaScript, once for all items). */
export function codeNode(jsCode: string): NodeSpec {
	return { type: 'n8n-nodes-base.code', typeVersion: 2, parameters: { jsCode } };
}

/** Code that returns `count` items `{ id }`, ids cycling 1..`cycle`. */
export function cyclingIds(count: number, cycle = 3): string {
	return `return Array.from({ length: ${count} }, (_, i) => ({ json: { id: (i % ${cycle}) + 1 } }));`;
}

/** Code that returns one item `{ id }` per id. */
export function givenIds(ids: number[]): string {
	return `return ${JSON.stringify(ids)}.map((id) => ({ json: { id } }));`;
}

/**
 * Manual Trigger -> Items (`count` x `{id}`, ids cycling 1..3, or what `itemsCode`
 * returns) -> `measured` (renamed MEASURED).
 */
export function itemsThen(
	name: string,
	count: number,
	measured: NodeSpec,
	options: { itemsCode?: string } = {},
): WorkflowImport {
	return {
		id: newN8nId(),
		name,
		nodes: [
			place(MANUAL, 'Manual', [0, 0]),
			place(codeNode(options.itemsCode ?? cyclingIds(count)), 'Items', [220, 0]),
			place(measured, MEASURED, [440, 0]),
		],
		connections: {
			Manual: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
			Items: { main: [[{ node: MEASURED, type: 'main', index: 0 }]] },
		},
	};
}

/** Manual Trigger -> `measured` (a node that makes its own items, e.g. Event Get Many). */
export function manualThen(name: string, measured: NodeSpec): WorkflowImport {
	return {
		id: newN8nId(),
		name,
		nodes: [
			place(MANUAL, 'Manual', [0, 0]),
			place(measured, MEASURED, [220, 0]),
		],
		connections: { Manual: { main: [[{ node: MEASURED, type: 'main', index: 0 }]] } },
	};
}

/** A Clinic node with a Clinic API credential. */
export function clinicNode(credential: { id: string; name: string }, parameters: Record<string, unknown>): NodeSpec {
	return {
		type: CLINIC_NODE_TYPE,
		typeVersion: 1,
		parameters: { authentication: 'clinicApi', ...parameters },
		credentials: { clinicApi: { id: credential.id, name: credential.name } },
	};
}

/** n8n's HTTP Request node 4.2: GET `url` with a fixed Authorization header. */
export function httpRequestNode(url: string, bearer: string, options: Record<string, unknown> = {}): NodeSpec {
	return {
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		parameters: {
			url,
			sendHeaders: true,
			headerParameters: { parameters: [{ name: 'Authorization', value: `Bearer ${bearer}` }] },
			options,
		},
	};
}

/**
 * Batching option of the HTTP Request node: `size` items per batch, `intervalMs` between
 * batches. (It never waits for answers: it pauses between starting batches, if at all.)
 */
export function batching(size: number, intervalMs: number): Record<string, unknown> {
	return { batching: { batch: { batchSize: size, batchInterval: intervalMs } } };
}

/** A fresh Clinic API credential (no stored token) for the simulator. */
export function clinicCredential(
	sim: { apiBaseUrl: string; webhooksBaseUrl: string; topicPrefix: string; demo: { username: string; password: string } },
	label: string,
): CredentialImport & { id: string } {
	return {
		id: newN8nId(),
		name: `Clinic ${label}`,
		type: 'clinicApi',
		data: passwordCredentialData(sim),
	};
}
