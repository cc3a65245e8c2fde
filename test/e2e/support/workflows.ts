/**
 * The Clinic Trigger workflows the end-to-end files import: one builder, so a file states
 * only what differs (its name, address, events, version and credential).
 */
import type { IDataObject } from 'n8n-workflow';

import type { Simulator } from '../../simulator';
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
	/** Default 1.1, the latest; 1 is what nodes saved before it carry. */
	typeVersion?: number;
	/** Version 1.1's Output; default Raw (the whole value, as the files compare it). */
	output?: 'raw' | 'simple';
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
				typeVersion: workflow.typeVersion ?? 1.1,
				position: [0, 0],
				webhookId: workflow.webhookId,
				parameters: {
					authentication: 'clinicApi',
					events: workflow.events ?? ['patient:patient-updated'],
					options: workflow.options ?? { allowInsecureUrl: true },
					...((workflow.typeVersion ?? 1.1) >= 1.1 ? { outputMode: workflow.output ?? 'raw' } : {}),
				},
				credentials: { clinicApi: workflow.credential ?? DEMO_CREDENTIAL },
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}

/** Logs and delivers the event a Clinic Trigger workflow listens for by default: patient-updated, for patient `id`. */
export const patientUpdated = async (sim: Simulator, id: number) => await sim.emit('patient', 'patient-updated', { id, first_name: 'Ana' });

/**
 * Webhook -> Clinic Consultation Get: the consultation whose id the request's JSON body
 * names (`{"id": 1}`) is the webhook's answer. `typeVersion` 1 with the plain id parameter
 * is how 0.1.0 saved it.
 */
export function consultationOnRequestWorkflow(workflow: { name: string; path: string; webhookId: string; typeVersion?: 1 | 1.1 }): WorkflowImport {
	const typeVersion = workflow.typeVersion ?? 1.1;
	const id = '={{ $json.body.id }}';
	return chain(workflow.name, [
		{ ...webhookTrigger(workflow.path, { webhookId: workflow.webhookId }), id: `${workflow.webhookId}-webhook` },
		{
			...clinicNode('Clinic', { resource: 'consultation', operation: 'get', consultationId: typeVersion === 1 ? id : byId(id) }, { typeVersion }),
			id: `${workflow.webhookId}-clinic`,
		},
	]);
}

/** One node of `chain`: its position is filled in, its id from its name when missing. */
export type ChainNode = WorkflowImport['nodes'][number] & { id?: string };

export function manualTrigger(name = 'Start'): ChainNode {
	return { name, type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} };
}

/** n8n's Webhook node on `path` (POST), answering with what `responseMode` says. */
export function webhookTrigger(path: string, options: { webhookId?: string; responseMode?: string; name?: string } = {}): ChainNode {
	return {
		name: options.name ?? 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		...(options.webhookId ? { webhookId: options.webhookId } : {}),
		parameters: { httpMethod: 'POST', path, responseMode: options.responseMode ?? 'lastNode', options: {} },
	};
}

/** An Edit Fields (Set) node assigning `fields` (values may be expressions). */
export function setNode(name: string, fields: Array<{ name: string; value: unknown; type: string }>): ChainNode {
	const assignments = fields.map((field, index) => ({ id: `${name}-${index}`, ...field }));
	return { name, type: 'n8n-nodes-base.set', typeVersion: 3.4, parameters: { assignments: { assignments }, options: {} } };
}

/** A Clinic node; default: the latest version with the simulator's password credential. */
export function clinicNode(
	name: string,
	parameters: Record<string, unknown>,
	options: { typeVersion?: number; credentialType?: string; credential?: { id: string; name: string }; onError?: string } = {},
): ChainNode {
	const credentialType = options.credentialType ?? 'clinicApi';
	return {
		name,
		type: 'n8n-nodes-clinic.clinic',
		typeVersion: options.typeVersion ?? 1.1,
		...(options.onError ? { onError: options.onError } : {}),
		parameters: { authentication: credentialType, ...parameters },
		credentials: { [credentialType]: options.credential ?? DEMO_CREDENTIAL },
	};
}

/** A resource locator's "By ID" value, as version 1.1 nodes save it. */
export const byId = (value: number | string) => ({ __rl: true, mode: 'id', value: String(value) });

/** A workflow of `nodes` one after the other (the first is its trigger). */
export function chain(name: string, nodes: ChainNode[], extra: Partial<WorkflowImport> = {}): WorkflowImport {
	const placed = nodes.map((node, index) => ({ ...node, id: node.id ?? node.name.replace(/\W+/g, '-').toLowerCase(), position: [220 * index, 0] }));
	const connections: WorkflowImport['connections'] = {};
	for (let i = 0; i + 1 < placed.length; i++) connections[placed[i].name] = { main: [[{ node: placed[i + 1].name, type: 'main', index: 0 }]] };
	return { name, nodes: placed, connections, settings: { executionOrder: 'v1' }, ...extra };
}
