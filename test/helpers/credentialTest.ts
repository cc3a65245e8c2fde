/**
 * The credential's Test button, as n8n's CredentialsTester (packages/cli/src/services/
 * credentials-tester.service.ts) runs it for a credential type with a `test.request`:
 * defaults applied to the data, a temporary NoOp node whose only parameter `temp` routes
 * the test request, n8n-core's RoutingNode on an ExecuteContext in 'internal' mode. The
 * routing resolves the request's expressions against `$credentials` with n8n-workflow's
 * expression engine and sends it with httpRequestWithAuthentication, which runs the
 * credential's preAuthentication (forced: the node is the mock node) and authenticate.
 * The answer is mapped to {status, message} exactly as the tester maps it.
 */
import './n8nEnv';

import { ExecuteContext, RoutingNode } from 'n8n-core';
import { NodeHelpers, UnexpectedError, Workflow } from 'n8n-workflow';
import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequestData,
	ICredentialsDecrypted,
	IDataObject,
	IExecuteData,
	INode,
	INodeCredentialTestResult,
	INodeExecutionData,
	INodeType,
	INodeTypes,
	IRunExecutionData,
	ITaskDataConnections,
	IVersionedNodeType,
} from 'n8n-workflow';

import { CredentialStore, getCredentialType } from './credentialsHelper';
import type { ClinicCredentialType, PreAuthenticationCall } from './credentialsHelper';
import { ensureN8nCore } from './n8nEnv';
import { createAdditionalData } from './n8nRuntime';

export interface TestCredentialOptions {
	/**
	 * The credentials database. The editor saves a credential before testing it, and n8n
	 * saves what preAuthentication returns into that row; default a new store holding
	 * `data`. When the store already has the credential, `data` is saved over it (the
	 * hidden token fields stay) and the merged data is tested.
	 */
	store?: CredentialStore;
	/** Id of the saved credential; default the one of its type in `store`, else a new one. */
	id?: string;
}

export interface TestCredentialResult extends INodeCredentialTestResult {
	store: CredentialStore;
	/** The error the routing node threw, when the test failed (for leak checks). */
	error?: unknown;
	preAuthenticationCalls: PreAuthenticationCall[];
}

const noOpDescription = {
	displayName: 'No Operation, do nothing',
	name: 'n8n-nodes-base.noOp',
	group: ['organization'],
	version: 1,
	description: 'No Operation',
	defaults: { name: 'No Operation, do nothing' },
	inputs: ['main'],
	outputs: ['main'],
	properties: [],
} as unknown as INodeType['description'];

/** Runs what the Test button runs; returns n8n's {status: 'OK'|'Error', message}. */
export async function testCredential(
	type: ClinicCredentialType | string,
	data: ICredentialDataDecryptedObject,
	options: TestCredentialOptions = {},
): Promise<TestCredentialResult> {
	await ensureN8nCore();
	const store = options.store ?? new CredentialStore();
	let id: string | undefined = options.id;
	if (id === undefined && store.has(type)) id = store.find(type).id;
	if (id === undefined || !store.has(id)) {
		id = String(store.add(type, data, id === undefined ? {} : { id }).id);
	} else {
		// Saved before: the editor saves the changes, and n8n tests the saved fields merged with them.
		store.edit(id, data);
	}
	const { name } = store.find(id);
	const credentialsDecrypted: ICredentialsDecrypted = { id, name, type, data: store.data(id) };

	const additionalData = createAdditionalData({ store });
	const result = (partial: INodeCredentialTestResult & { error?: unknown }): TestCredentialResult => ({
		...partial,
		store,
		preAuthenticationCalls: additionalData.credentialsHelper.preAuthenticationCalls,
	});

	const credentialType = getCredentialType(type);
	if (!credentialType.test) {
		return result({ status: 'Error', message: 'No testing function found for this credential.' });
	}
	const credentialTestFunction: ICredentialTestRequestData = { testRequest: credentialType.test };

	try {
		credentialsDecrypted.data = await additionalData.credentialsHelper.applyDefaultsAndOverwrites(
			additionalData,
			credentialsDecrypted.data as ICredentialDataDecryptedObject,
			type,
			'internal',
		);
	} catch (error) {
		return result({ status: 'Error', message: (error as Error).message.toString(), error });
	}

	const nodeType: INodeType = { description: noOpDescription };
	const node: INode = {
		id: 'temp',
		parameters: {},
		name: 'Temp-Node',
		type: nodeType.description.name,
		typeVersion: Array.isArray(nodeType.description.version)
			? nodeType.description.version.slice(-1)[0]
			: nodeType.description.version,
		position: [0, 0],
		credentials: { [type]: { id: credentialsDecrypted.id, name: credentialsDecrypted.name } },
	};
	const nodeTypeCopy: INodeType = {
		description: {
			...nodeType.description,
			credentials: [{ name: type, required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					routing: { request: credentialTestFunction.testRequest.request },
					default: '',
				},
			],
		},
	};
	const mockNodeTypes: INodeTypes = {
		getKnownTypes: (): IDataObject => ({}),
		getByName: (name: string): INodeType | IVersionedNodeType => {
			if (name !== nodeTypeCopy.description.name) throw new UnexpectedError('Unrecognized node type');
			return nodeTypeCopy;
		},
		getByNameAndVersion: (name: string, version?: number): INodeType => {
			if (name !== nodeTypeCopy.description.name) throw new UnexpectedError('Unrecognized node type');
			return NodeHelpers.getVersionedNodeType(nodeTypeCopy, version);
		},
	};
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes: mockNodeTypes });

	const inputData: ITaskDataConnections = { main: [[{ json: {} }]] };
	const connectionInputData: INodeExecutionData[] = [];
	const runExecutionData = { resultData: { runData: {} } } as unknown as IRunExecutionData;
	const executeData: IExecuteData = { node, data: {}, source: null };
	const executeFunctions = new ExecuteContext(
		workflow,
		node,
		additionalData,
		'internal',
		runExecutionData,
		0,
		connectionInputData,
		inputData,
		executeData,
		[],
	);
	const routingNode = new RoutingNode(executeFunctions, nodeTypeCopy, credentialsDecrypted);

	let response: INodeExecutionData[][] | null | undefined;
	try {
		response = await routingNode.runNode();
	} catch (caught) {
		const error = caught as {
			message: string;
			cause?: { response?: { status: number; statusText?: string }; code?: string };
		};
		if (error.cause?.response) {
			const errorResponseData = {
				statusCode: error.cause.response.status,
				statusMessage: error.cause.response.statusText,
			};
			for (const rule of credentialTestFunction.testRequest.rules ?? []) {
				if (rule.type === 'responseCode' && errorResponseData.statusCode === rule.properties.value) {
					return result({ status: 'Error', message: rule.properties.message, error });
				}
			}
			if (errorResponseData.statusCode < 199 || errorResponseData.statusCode > 299) {
				return result({
					status: 'Error',
					message: errorResponseData.statusMessage || `Received HTTP status code: ${errorResponseData.statusCode}`,
					error,
				});
			}
		} else if (error.cause?.code) {
			return result({ status: 'Error', message: error.cause.code, error });
		}
		return result({ status: 'Error', message: error.message.toString(), error });
	}

	for (const rule of credentialTestFunction.testRequest.rules ?? []) {
		if (rule.type === 'responseSuccessBody') {
			const responseData = response![0][0].json;
			const value = rule.properties.key.split('.').reduce<unknown>(
				(current, key) => (current && typeof current === 'object' ? (current as IDataObject)[key] : undefined),
				responseData,
			);
			if (value === rule.properties.value) return result({ status: 'Error', message: rule.properties.message });
		}
	}
	return result({ status: 'OK', message: 'Connection successful!' });
}
