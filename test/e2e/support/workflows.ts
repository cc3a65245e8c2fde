/**
 * The Clinic Trigger workflows the end-to-end files import: one builder, so a file states
 * only what differs (its name, address, events, version and credential).
 */
import type { IDataObject } from 'n8n-workflow';

import type { WorkflowImport } from '../harness';
import { DEMO_CREDENTIAL_IDS } from './examples';

/** The simulator's password credential, as `simulatorCredentials` imports it. */
export const DEMO_CREDENTIAL = { id: DEMO_CREDENTIAL_IDS.clinicApi, name: 'Clinic API (simulator)' };

export interface ClinicTriggerWorkflow {
	name: string;
	/** The node's webhook id: its address, fixed so that it survives restarts. */
	webhookId: string;
	nodeName?: string;
	nodeId?: string;
	/** Event keys; default patient-updated. */
	events?: string[];
	/** Default 1 (the whole value in the output); 1.1 outputs Simplified. */
	typeVersion?: number;
	/** Default: Allow Insecure URL, for n8n's local http:// address. */
	options?: IDataObject;
	credential?: { id: string; name: string };
}

/** A workflow of one Clinic Trigger node. */
export function clinicTriggerWorkflow(workflow: ClinicTriggerWorkflow): WorkflowImport {
	return {
		name: workflow.name,
		nodes: [
			{
				id: workflow.nodeId ?? `${workflow.webhookId}-node`,
				name: workflow.nodeName ?? 'Patient Updated',
				type: 'n8n-nodes-clinic.clinicTrigger',
				typeVersion: workflow.typeVersion ?? 1,
				position: [0, 0],
				webhookId: workflow.webhookId,
				parameters: {
					authentication: 'clinicApi',
					events: workflow.events ?? ['patient:patient-updated'],
					options: workflow.options ?? { allowInsecureUrl: true },
				},
				credentials: { clinicApi: workflow.credential ?? DEMO_CREDENTIAL },
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}

/**
 * Webhook -> Clinic Consultation Get: the consultation whose id the request's JSON body
 * names (`{"id": 1}`) is the webhook's answer. `typeVersion` 1 with the plain id parameter
 * is how 0.1.0 saved it.
 */
export function consultationOnRequestWorkflow(workflow: { name: string; path: string; webhookId: string; typeVersion?: 1 | 1.1 }): WorkflowImport {
	const typeVersion = workflow.typeVersion ?? 1.1;
	const id = '={{ $json.body.id }}';
	return {
		name: workflow.name,
		nodes: [
			{
				id: `${workflow.webhookId}-webhook`,
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: workflow.webhookId,
				parameters: { httpMethod: 'POST', path: workflow.path, responseMode: 'lastNode', options: {} },
			},
			{
				id: `${workflow.webhookId}-clinic`,
				name: 'Clinic',
				type: 'n8n-nodes-clinic.clinic',
				typeVersion,
				position: [220, 0],
				parameters: {
					authentication: 'clinicApi',
					resource: 'consultation',
					operation: 'get',
					consultationId: typeVersion === 1 ? id : { __rl: true, mode: 'id', value: id },
				},
				credentials: { clinicApi: DEMO_CREDENTIAL },
			},
		],
		connections: { Webhook: { main: [[{ node: 'Clinic', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}
