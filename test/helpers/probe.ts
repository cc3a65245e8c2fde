/**
 * A test-only node that sends arbitrary requests through the package's transport
 * (`ClinicClient` in nodes/shared/transport.ts) inside a real n8n execution. It lets
 * the credential and request-path tests reach every host and endpoint (token placement,
 * 401 retry) whether or not the operation that will use it is written yet, with exactly
 * the code path the Clinic node's operations use: ClinicClient -> n8n-core
 * httpRequestWithAuthentication -> the credential's preAuthentication/authenticate ->
 * n8n-core's HTTP client.
 */
import './n8nEnv';

import { NodeConnectionTypes } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { ClinicClient } from '../../nodes/shared/transport';
import type { Authentication } from '../../nodes/shared/credentialSettings';
import type { ClinicRequest, RequestGate } from '../../nodes/shared/requestTypes';
import { PACKAGE_NAME, TestNodeTypes } from './n8nRuntime';
import { runNodeInWorkflow } from './runNode';
import type { ClinicCredentialsInput, RunClinicNodeResult } from './runNode';
import type { CredentialStore } from './credentialsHelper';

export const PROBE_NODE_TYPE = `${PACKAGE_NAME}.clinicProbe`;

export interface ProbeOptions {
	authentication: Authentication;
	/** Requests sent for every input item, in order (items at once with `concurrent`); or per item. */
	requests: ClinicRequest[] | ((itemIndex: number) => ClinicRequest[]);
	credentials?: ClinicCredentialsInput;
	store?: CredentialStore;
	/** Number of input items (default 1); each item sends all `requests`. */
	items?: number;
	/** Send every item's requests at the same time (Promise.all over items). */
	concurrent?: boolean;
	/** Base URL for `authentication: 'none'`. */
	publicBaseUrl?: string;
	continueOnFail?: boolean;
	/** The client's gate (as the Clinic node's item scheduler) and its Retry-After budget. */
	gate?: RequestGate;
	maxRetryWaitMs?: number;
	/** Called before each request is sent (e.g. to revoke tokens mid-run). */
	beforeRequest?: (itemIndex: number, requestIndex: number) => void | Promise<void>;
}

function probeNode(options: ProbeOptions): INodeType {
	const description: INodeTypeDescription = {
		displayName: 'Clinic Probe',
		name: 'clinicProbe',
		group: ['transform'],
		version: 1,
		description: 'Test node: sends requests through the clinic transport',
		defaults: { name: 'Clinic Probe' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{ name: 'clinicApi', required: false },
			{ name: 'clinicRefreshTokenApi', required: false },
			{ name: 'clinicPatientPortalApi', required: false },
		],
		properties: [],
	};
	return {
		description,
		async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
			const items = this.getInputData();
			const client = new ClinicClient(this, options.authentication, {
				publicBaseUrl: options.publicBaseUrl ?? '',
				gate: options.gate,
				maxRetryWaitMs: options.maxRetryWaitMs,
			});
			const runItem = async (itemIndex: number): Promise<INodeExecutionData[]> => {
				const out: INodeExecutionData[] = [];
				const requests = typeof options.requests === 'function' ? options.requests(itemIndex) : options.requests;
				for (const [requestIndex, request] of requests.entries()) {
					await options.beforeRequest?.(itemIndex, requestIndex);
					try {
						const response = await client.requestFull(request, itemIndex);
						const body = Buffer.isBuffer(response.body) || response.body instanceof ArrayBuffer
							? `<${Buffer.from(response.body as Buffer).length} bytes>`
							: response.body;
						out.push({ json: { statusCode: response.statusCode, body: body as IDataObject }, pairedItem: { item: itemIndex } });
					} catch (error) {
						if (!this.continueOnFail()) throw error;
						out.push({
							json: { error: (error as Error).message, details: (error as { description?: string }).description ?? '' },
							pairedItem: { item: itemIndex },
						});
					}
				}
				return out;
			};
			const results = options.concurrent
				? await Promise.all(items.map(async (_item, index) => await runItem(index)))
				: await items.reduce<Promise<INodeExecutionData[][]>>(
						async (previous, _item, index) => [...(await previous), await runItem(index)],
						Promise.resolve([]),
					);
			return [results.flat()];
		},
	};
}

/** Runs `requests` through ClinicClient in a real n8n execution (Manual Trigger -> probe node). */
export async function runClinicRequests(options: ProbeOptions): Promise<RunClinicNodeResult> {
	const nodeTypes = new TestNodeTypes().register(PROBE_NODE_TYPE, probeNode(options));
	return await runNodeInWorkflow(
		PROBE_NODE_TYPE,
		{
			parameters: {},
			credentials: options.credentials,
			store: options.store,
			items: Array.from({ length: options.items ?? 1 }, (_unused, index) => ({ json: { index } })),
			continueOnFail: options.continueOnFail,
			nodeName: 'Clinic Probe',
		},
		nodeTypes,
	);
}
