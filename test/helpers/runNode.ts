/**
 * Runs the Clinic action node the way n8n runs it: a two-node workflow (Manual Trigger ->
 * Clinic) through n8n-core's WorkflowExecute, so the node gets n8n-core's real
 * ExecuteContext, request helpers (httpRequest, httpRequestWithAuthentication with its
 * preAuthentication/authenticate calls), binary data service, paired-item handling and
 * error handling. Input items are the Manual Trigger's pinned output.
 */
import './n8nEnv';

import { WorkflowExecute } from 'n8n-core';
import { Workflow } from 'n8n-workflow';
import type {
	ExecutionError,
	ICredentialDataDecryptedObject,
	INode,
	INodeCredentials,
	INodeExecutionData,
	INodeParameters,
	IRun,
	IWorkflowBase,
	WorkflowExecuteMode,
} from 'n8n-workflow';

import { CredentialStore } from './credentialsHelper';
import type { ClinicCredentialType, PreAuthenticationCall } from './credentialsHelper';
import { ensureN8nCore } from './n8nEnv';
import { CLINIC_NODE_TYPE, MANUAL_TRIGGER_NODE_TYPE, TestNodeTypes, createAdditionalData } from './n8nRuntime';

export type ClinicCredentialsInput = Partial<Record<ClinicCredentialType, ICredentialDataDecryptedObject>>;

export interface RunClinicNodeOptions {
	/** The Clinic node's parameters as the editor saves them (defaults are filled in by n8n). */
	parameters: INodeParameters;
	/**
	 * Credential data by type. Without `store`: saved into a new store. With `store`: a type
	 * the store lacks is added; a type it has is edited (the given fields overwrite, the
	 * hidden token fields n8n saved stay), as when the user edits the credential.
	 */
	credentials?: ClinicCredentialsInput;
	/** Input items (default one empty item). */
	items?: INodeExecutionData[];
	/** The node's "On Error: Continue" setting. */
	continueOnFail?: boolean;
	/** Credentials saved by an earlier run: pass `result.store` to simulate the next execution. */
	store?: CredentialStore;
	/** Execution mode; default 'manual' (the editor's "Execute step"). */
	mode?: WorkflowExecuteMode;
	/** Node name; default 'Clinic'. */
	nodeName?: string;
	/** The node's version (default 1, as saved workflows from before version 1.1 hold it). */
	typeVersion?: number;
	/** Stops the execution when aborted, as n8n's Stop button does. */
	signal?: AbortSignal;
}

export interface RunClinicNodeResult {
	/** The node's output (one array per output), when the node did not fail. */
	output?: INodeExecutionData[][];
	/** The error n8n recorded for the execution (a NodeApiError / NodeOperationError ...), when it failed. */
	error?: ExecutionError;
	/** The credential store after the run: what n8n saved (tokens) is in it. */
	store: CredentialStore;
	/** The whole run as n8n-core returns it (undefined when n8n refused to start it). */
	run?: IRun;
	/** The node as it ran (parameters with defaults filled in). */
	node: INode;
	/** Every preAuthentication call n8n-core made during the run. */
	preAuthenticationCalls: PreAuthenticationCall[];
}

const TRIGGER_NAME = 'When clicking ‘Execute workflow’';

/** Executions not ended yet: a test that timed out stops its own (`stopPendingRuns`). */
const pendingRuns = new Set<{ cancel(): void; done: Promise<unknown> }>();

/**
 * Stops every execution still running (as n8n's Stop button does) and waits up to `waitMs`
 * for them to end, so that a test that timed out sends nothing into the next one. Returns
 * how many were stopped.
 */
export async function stopPendingRuns(waitMs = 10_000): Promise<number> {
	const runs = [...pendingRuns];
	for (const run of runs) run.cancel();
	let timer: NodeJS.Timeout | undefined;
	const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
	await Promise.race([Promise.allSettled(runs.map(async (run) => await run.done)), bound]);
	clearTimeout(timer);
	return runs.length;
}

/** Puts the given credentials into the store (new ones added, existing ones edited). */
export function applyCredentials(store: CredentialStore, credentials: ClinicCredentialsInput = {}): void {
	for (const [type, data] of Object.entries(credentials)) {
		if (!data) continue;
		if (store.has(type)) store.edit(type, data);
		else store.add(type, data);
	}
}

/** `node.credentials` for every credential in the store, as the editor sets it when one is picked. */
export function nodeCredentialsFrom(store: CredentialStore): INodeCredentials {
	const references: INodeCredentials = {};
	for (const record of store.all()) references[record.type] ??= { id: record.id, name: record.name };
	return references;
}

export async function runClinicNode(options: RunClinicNodeOptions): Promise<RunClinicNodeResult> {
	return await runNodeInWorkflow(CLINIC_NODE_TYPE, options);
}

/**
 * Runs any node type known to `nodeTypes` (default: this package's) as the second node
 * of *Manual Trigger -> node*. runClinicNode and runClinicRequests use it.
 */
export async function runNodeInWorkflow(
	nodeTypeName: string,
	options: RunClinicNodeOptions,
	nodeTypes: TestNodeTypes = new TestNodeTypes(),
): Promise<RunClinicNodeResult> {
	await ensureN8nCore();
	const store = options.store ?? new CredentialStore();
	applyCredentials(store, options.credentials);
	const mode = options.mode ?? 'manual';
	const nodeName = options.nodeName ?? 'Clinic';

	const trigger: INode = {
		id: 'manual-trigger',
		name: TRIGGER_NAME,
		type: MANUAL_TRIGGER_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
	const clinic: INode = {
		id: 'clinic-node',
		name: nodeName,
		type: nodeTypeName,
		typeVersion: options.typeVersion ?? 1,
		position: [220, 0],
		parameters: options.parameters,
		credentials: nodeCredentialsFrom(store),
		...(options.continueOnFail ? { onError: 'continueRegularOutput' as const } : {}),
	};
	const connections = { [TRIGGER_NAME]: { main: [[{ node: nodeName, type: 'main' as const, index: 0 }]] } };
	const workflow = new Workflow({
		id: 'clinic-test-workflow',
		name: 'Clinic test',
		nodes: [trigger, clinic],
		connections,
		active: false,
		nodeTypes,
		settings: { executionOrder: 'v1' },
	});
	const workflowData: IWorkflowBase = {
		id: workflow.id,
		name: workflow.name ?? 'Clinic test',
		active: false,
		isArchived: false,
		nodes: [trigger, clinic],
		connections,
		settings: { executionOrder: 'v1' },
		createdAt: new Date(),
		updatedAt: new Date(),
		activeVersionId: null,
	} as unknown as IWorkflowBase;

	const additionalData = createAdditionalData({ store, mode, workflowData });
	const items = options.items ?? [{ json: {} }];
	let run: IRun | undefined;
	let thrown: ExecutionError | undefined;
	let pending: { cancel(): void; done: Promise<unknown> } | undefined;
	try {
		const execution = new WorkflowExecute(additionalData, mode).run({
			workflow,
			startNode: workflow.getNode(TRIGGER_NAME) ?? undefined,
			pinData: { [TRIGGER_NAME]: items },
		});
		pending = { cancel: () => execution.cancel(), done: execution };
		pendingRuns.add(pending);
		options.signal?.addEventListener('abort', () => execution.cancel(), { once: true });
		run = await execution;
	} catch (error) {
		// n8n refuses to start a workflow whose nodes have issues (a required parameter empty).
		thrown = error as ExecutionError;
	} finally {
		if (pending) pendingRuns.delete(pending);
	}

	const ranNode = workflow.getNode(nodeName) as INode;
	const taskData = run?.data.resultData.runData[nodeName]?.[0];
	const error = thrown ?? run?.data.resultData.error ?? taskData?.error;
	return {
		...(error ? { error } : { output: (taskData?.data?.main ?? []) as INodeExecutionData[][] }),
		store,
		run,
		node: ranNode,
		preAuthenticationCalls: additionalData.credentialsHelper.preAuthenticationCalls,
	};
}
