/**
 * The pieces of an n8n instance a node execution touches: the node types (ours, loaded
 * from source, plus a Manual Trigger), and `IWorkflowExecuteAdditionalData` wired to the
 * in-memory CredentialsHelper. Everything else in n8n-core (contexts, request helpers,
 * the execution loop, binary data) is the real thing.
 */
import './n8nEnv';

import { ExecutionLifecycleHooks } from 'n8n-core';
import { NodeHelpers, UnexpectedError } from 'n8n-workflow';
import type {
	IDataObject,
	INodeType,
	INodeTypes,
	IVersionedNodeType,
	IWorkflowBase,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
} from 'n8n-workflow';

import { TestCredentialsHelper } from './credentialsHelper';
import type { CredentialStore } from './credentialsHelper';

/** Community nodes are registered as `<package name>.<node name>`. */
export const PACKAGE_NAME = 'n8n-nodes-clinic';
export const CLINIC_NODE_TYPE = `${PACKAGE_NAME}.clinic`;
export const CLINIC_TRIGGER_NODE_TYPE = `${PACKAGE_NAME}.clinicTrigger`;
export const CLINIC_EVENT_LOG_TRIGGER_NODE_TYPE = `${PACKAGE_NAME}.clinicEventLogTrigger`;
export const MANUAL_TRIGGER_NODE_TYPE = 'n8n-nodes-base.manualTrigger';

/** Base URL n8n would put in front of webhook paths (production webhooks). */
export const N8N_WEBHOOK_BASE_URL = 'https://n8n.example.test/webhook/';
export const N8N_WEBHOOK_TEST_BASE_URL = 'https://n8n.example.test/webhook-test/';

/** n8n-nodes-base's Manual Trigger, as far as the execution engine cares. */
class ManualTrigger implements INodeType {
	description = {
		displayName: 'When clicking ‘Execute workflow’',
		name: 'manualTrigger',
		group: ['trigger'],
		version: 1,
		description: 'Runs the flow on clicking a button in n8n',
		eventTriggerDescription: '',
		maxNodes: 1,
		defaults: { name: 'When clicking ‘Execute workflow’' },
		inputs: [],
		outputs: ['main'],
		properties: [],
	} as unknown as INodeType['description'];

	async trigger(this: import('n8n-workflow').ITriggerFunctions) {
		const manualTriggerFunction = async () => {
			this.emit([this.helpers.returnJsonArray([{}])]);
		};
		return { manualTriggerFunction };
	}
}

type NodeFactory = () => INodeType | IVersionedNodeType;

/** Node classes are required only when first used, so a half-written node breaks only its own tests. */
const factories: Record<string, NodeFactory> = {
	[CLINIC_NODE_TYPE]: () => {
		const { Clinic } = require('../../nodes/Clinic/Clinic.node') as typeof import('../../nodes/Clinic/Clinic.node');
		return new Clinic();
	},
	[CLINIC_TRIGGER_NODE_TYPE]: () => {
		const module = require('../../nodes/ClinicTrigger/ClinicTrigger.node') as Record<string, new () => INodeType>;
		return new module.ClinicTrigger();
	},
	[CLINIC_EVENT_LOG_TRIGGER_NODE_TYPE]: () => {
		const module = require('../../nodes/ClinicEventLogTrigger/ClinicEventLogTrigger.node') as Record<string, new () => INodeType>;
		return new module.ClinicEventLogTrigger();
	},
	[MANUAL_TRIGGER_NODE_TYPE]: () => new ManualTrigger(),
};

const instances = new Map<string, INodeType | IVersionedNodeType>();

/** n8n's NodeTypes for this package. Extra node types (e.g. a mock) can be registered per instance. */
export class TestNodeTypes implements INodeTypes {
	private readonly extra = new Map<string, INodeType>();

	register(name: string, type: INodeType): this {
		this.extra.set(name, type);
		return this;
	}

	getKnownTypes(): IDataObject {
		return {};
	}

	getByName(nodeType: string): INodeType | IVersionedNodeType {
		const extra = this.extra.get(nodeType);
		if (extra) return extra;
		let instance = instances.get(nodeType);
		if (!instance) {
			const factory = factories[nodeType];
			if (!factory) throw new UnexpectedError('Unrecognized node type', { tags: { nodeType } });
			instance = factory();
			instances.set(nodeType, instance);
		}
		return instance;
	}

	getByNameAndVersion(nodeType: string, version?: number): INodeType {
		return NodeHelpers.getVersionedNodeType(this.getByName(nodeType), version);
	}
}

export interface AdditionalDataOptions {
	store: CredentialStore;
	mode?: WorkflowExecuteMode;
	executionId?: string;
	workflowData?: IWorkflowBase;
	credentialsHelper?: TestCredentialsHelper;
}

let executionCounter = 0;

export function nextExecutionId(): string {
	return String(++executionCounter);
}

/** What n8n's WorkflowExecuteAdditionalData.getBase() hands to executions, minus the server. */
export function createAdditionalData(options: AdditionalDataOptions): IWorkflowExecuteAdditionalData & {
	credentialsHelper: TestCredentialsHelper;
} {
	const credentialsHelper = options.credentialsHelper ?? new TestCredentialsHelper(options.store);
	const executionId = options.executionId ?? nextExecutionId();
	const additionalData = {
		credentialsHelper,
		executionId,
		workflowId: options.workflowData?.id ?? 'clinic-test-workflow',
		userId: 'clinic-test-user',
		currentNodeExecutionIndex: 0,
		restApiUrl: 'https://n8n.example.test/rest',
		instanceBaseUrl: 'https://n8n.example.test/',
		formBaseUrl: 'https://n8n.example.test/form',
		formWaitingBaseUrl: 'https://n8n.example.test/form-waiting',
		formTestBaseUrl: 'https://n8n.example.test/form-test',
		webhookBaseUrl: N8N_WEBHOOK_BASE_URL.replace(/\/$/, ''),
		webhookWaitingBaseUrl: 'https://n8n.example.test/webhook-waiting',
		webhookTestBaseUrl: N8N_WEBHOOK_TEST_BASE_URL.replace(/\/$/, ''),
		mcpBaseUrl: 'https://n8n.example.test/mcp',
		mcpTestBaseUrl: 'https://n8n.example.test/mcp-test',
		variables: {},
		executeWorkflow: async () => {
			throw new Error('Sub-workflows are not available in the test harness');
		},
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		logAiEvent: () => {},
		startRunnerTask: async () => {
			throw new Error('Task runners are not available in the test harness');
		},
	} as unknown as IWorkflowExecuteAdditionalData & { credentialsHelper: TestCredentialsHelper };
	if (options.workflowData) {
		(additionalData as unknown as { hooks: ExecutionLifecycleHooks }).hooks = new ExecutionLifecycleHooks(
			options.mode ?? 'manual',
			executionId,
			options.workflowData,
		);
	}
	return additionalData;
}
