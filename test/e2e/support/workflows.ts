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
