/**
 * Runs a `methods.listSearch` function of the Clinic node the way the editor's
 * "From List" does: n8n-core's LoadOptionsContext on the node as it is in the panel.
 */
import './n8nEnv';

import { LoadOptionsContext } from 'n8n-core';
import { Workflow } from 'n8n-workflow';
import type { INode, INodeListSearchResult, INodeParameters, IWorkflowBase } from 'n8n-workflow';

import { Clinic } from '../../nodes/Clinic/Clinic.node';
import { CredentialStore } from './credentialsHelper';
import { ensureN8nCore } from './n8nEnv';
import { CLINIC_NODE_TYPE, TestNodeTypes, createAdditionalData } from './n8nRuntime';
import { applyCredentials, nodeCredentialsFrom } from './runNode';
import type { ClinicCredentialsInput } from './runNode';

export interface ListSearchOptions {
	method: string;
	parameters: INodeParameters;
	credentials?: ClinicCredentialsInput;
	store?: CredentialStore;
	filter?: string;
}

export async function runListSearch(options: ListSearchOptions): Promise<INodeListSearchResult> {
	await ensureN8nCore();
	const store = options.store ?? new CredentialStore();
	applyCredentials(store, options.credentials);
	const node: INode = {
		id: 'clinic-node',
		name: 'Clinic',
		type: CLINIC_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: options.parameters,
		credentials: nodeCredentialsFrom(store),
	};
	const workflow = new Workflow({ id: 'list-search', nodes: [node], connections: {}, active: false, nodeTypes: new TestNodeTypes() });
	const workflowData = { id: 'list-search', name: 'List search', nodes: [node], connections: {} } as unknown as IWorkflowBase;
	const additionalData = createAdditionalData({ store, mode: 'internal', workflowData });
	const context = new LoadOptionsContext(workflow, node, additionalData, 'parameters');
	const search = new Clinic().methods.listSearch as Record<string, (this: LoadOptionsContext, filter?: string) => Promise<INodeListSearchResult>>;
	return await search[options.method].call(context, options.filter);
}
