/**
 * The Clinic Event Log Trigger's life in n8n, through n8n-core's real PollContext: what
 * n8n's poll executor does each Poll Time (`nodeType.poll.call(pollFunctions)`), and what
 * it saves. n8n saves the workflow's static data when a poll emits (together with the
 * execution it starts) and once after activation, not after an empty poll (1.x and 2.x
 * without durable cursors), so `staticData` here follows those rules: pass it to the next
 * poll, and that poll runs as after an n8n restart.
 */
import './n8nEnv';

import { PollContext } from 'n8n-core';
import { Workflow, deepCopy } from 'n8n-workflow';
import type { IDataObject, INode, INodeExecutionData, INodeParameters, WorkflowExecuteMode } from 'n8n-workflow';

import { CredentialStore } from './credentialsHelper';
import { ensureN8nCore } from './n8nEnv';
import { CLINIC_EVENT_LOG_TRIGGER_NODE_TYPE, TestNodeTypes, createAdditionalData } from './n8nRuntime';
import { applyCredentials, nodeCredentialsFrom } from './runNode';
import type { ClinicCredentialsInput } from './runNode';

export interface PollOptions {
	parameters: INodeParameters;
	credentials?: ClinicCredentialsInput;
	store?: CredentialStore;
	/** The workflow's static data as n8n saved it last (default: none). */
	staticData?: IDataObject;
	/** 'trigger' (an active workflow, default) or 'manual' ("Fetch Test Event"). */
	mode?: 'trigger' | 'manual';
	/** The poll n8n runs when the workflow is activated (static data is saved after it). */
	activation?: boolean;
	nodeName?: string;
	/** The node's version (default 1, as saved workflows from before version 1.1 hold it). */
	typeVersion?: number;
}

export interface PollResult {
	/** The items the execution starts with; undefined when the poll emitted nothing. */
	items?: INodeExecutionData[];
	error?: Error;
	/** What n8n holds saved after this poll: pass it to the next one. */
	staticData: IDataObject;
	/** Whether n8n wrote the static data after this poll. */
	saved: boolean;
	/** The node's part of the saved static data. */
	nodeStaticData: IDataObject;
	store: CredentialStore;
}

export async function runPoll(options: PollOptions): Promise<PollResult> {
	await ensureN8nCore();
	const store = options.store ?? new CredentialStore();
	applyCredentials(store, options.credentials);
	const mode: WorkflowExecuteMode = options.mode ?? 'trigger';
	const nodeName = options.nodeName ?? 'Clinic Event Log Trigger';
	const nodeTypes = new TestNodeTypes();
	const nodeType = nodeTypes.getByNameAndVersion(CLINIC_EVENT_LOG_TRIGGER_NODE_TYPE, options.typeVersion ?? 1);
	const node: INode = {
		id: 'clinic-event-log-trigger-node',
		name: nodeName,
		type: CLINIC_EVENT_LOG_TRIGGER_NODE_TYPE,
		typeVersion: options.typeVersion ?? 1,
		position: [0, 0],
		parameters: options.parameters,
		credentials: nodeCredentialsFrom(store),
	};
	const before = options.staticData ?? {};
	const workflow = new Workflow({
		id: 'clinic-event-log-workflow',
		name: 'Clinic event log test',
		nodes: [node],
		connections: {},
		active: mode !== 'manual',
		nodeTypes,
		staticData: deepCopy(before),
		settings: { executionOrder: 'v1' },
	});
	const additionalData = createAdditionalData({ store, mode });
	const ranNode = workflow.getNode(nodeName) as INode;
	const context = new PollContext(workflow, ranNode, additionalData, mode, mode === 'manual' ? 'manual' : 'activate');

	let items: INodeExecutionData[] | undefined;
	let error: Error | undefined;
	try {
		const output = await nodeType.poll!.call(context);
		items = output ? output[0] : undefined;
	} catch (caught) {
		error = caught as Error;
	}
	const changed = workflow.staticData.__dataChanged === true;
	const saves = mode !== 'manual' && !error && changed && (items !== undefined || options.activation === true);
	let staticData = deepCopy(before);
	if (saves) {
		staticData = JSON.parse(JSON.stringify(workflow.staticData)) as IDataObject;
		delete staticData.__dataChanged;
		for (const value of Object.values(staticData)) {
			if (value && typeof value === 'object') delete (value as IDataObject).__dataChanged;
		}
	}
	return {
		items,
		...(error ? { error } : {}),
		staticData,
		saved: saves,
		nodeStaticData: deepCopy((staticData[`node:${nodeName}`] as IDataObject | undefined) ?? {}),
		store,
	};
}
