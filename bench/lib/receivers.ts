/**
 * The receivers of section 5, each a workflow on one running n8n: the Clinic Trigger and the
 * peers a clinic compares it with. `addresses` gives, once the workflows are active, where
 * each is reached and how a delivery to it is signed.
 */
import { randomUUID } from 'node:crypto';

import type { CredentialImport, WorkflowImport } from './n8n';
import { newN8nId } from './n8n';
import { CLINIC_TRIGGER_TYPE, type NodeSpec } from './workflows';
import type { N8nServer } from '../../test/e2e/harness';
import { signDelivery, type Simulator } from '../../test/simulator';

export type Receiver = 'trigger' | 'diy' | 'bare' | 'webhookHeaderAuth' | 'webhook';
export const RECEIVERS: Receiver[] = ['trigger', 'diy', 'bare', 'webhookHeaderAuth', 'webhook'];
export const LABELS: Record<Receiver, string> = {
	trigger: 'Clinic Trigger (signature checked, the log\'s events run by id)',
	diy: 'Do it yourself: Webhook (raw body) -> Crypto (HMAC) -> If (signature matches) -> Remove Duplicates',
	bare: 'Bare community trigger (emits the body, nothing else)',
	webhookHeaderAuth: 'Webhook node, Header Auth',
	webhook: 'Webhook node',
};
export const BARE_TRIGGER_TYPE = 'n8n-nodes-bench-bare-trigger.benchBareTrigger';
export const EVENT = 'patient:patient-updated';
const WEBHOOK_PATH = 'bench-deliveries';
/** What the workflows above start: a webhook node answers on receipt (n8n's default, "Immediately"). */
const RESPOND = { httpMethod: 'POST', responseMode: 'onReceived' };

export interface ReceiverSetup {
	workflows: Record<Receiver, WorkflowImport>;
	/** The Header Auth credential, and the secret the do-it-yourself workflow checks. */
	headerAuth: CredentialImport & { id: string; data: { name: string; value: string } };
	diySecret: string;
}

function workflowOf(name: string, nodes: Array<NodeSpec & { name: string }>): WorkflowImport {
	const named = nodes.map((node, i) => ({ ...node, id: newN8nId(), position: [i * 220, 0] as [number, number], webhookId: i === 0 ? randomUUID() : undefined }));
	const connections: WorkflowImport['connections'] = {};
	for (let i = 0; i + 1 < named.length; i++) connections[named[i].name] = { main: [[{ node: named[i + 1].name, type: 'main', index: 0 }]] };
	return { id: newN8nId(), name, nodes: named, connections };
}

/**
 * What a user builds without this package to receive the service's deliveries safely: the
 * raw body signed with the subscription's secret, compared with the `signature` header, and
 * repeats dropped by n8n's own Remove Duplicates (kept across executions).
 */
function doItYourself(secret: string): Array<NodeSpec & { name: string }> {
	return [
		{ name: 'Webhook', type: 'n8n-nodes-base.webhook', typeVersion: 2.1, parameters: { ...RESPOND, path: `${WEBHOOK_PATH}-diy`, options: { rawBody: true } } },
		{
			// Crypto 1: its secret is a parameter (Crypto 2, n8n 2.x only, takes it from a credential).
			name: 'Sign body',
			type: 'n8n-nodes-base.crypto',
			typeVersion: 1,
			parameters: { action: 'hmac', type: 'SHA256', binaryData: true, binaryPropertyName: 'data', secret, encoding: 'hex', dataPropertyName: 'expected' },
		},
		{
			name: 'Signature matches',
			type: 'n8n-nodes-base.if',
			typeVersion: 2.3,
			parameters: {
				looseTypeValidation: false,
				conditions: {
					options: { caseSensitive: true, leftValue: '', typeValidation: 'strict', version: 3 },
					conditions: [{ id: randomUUID(), leftValue: '={{ $json.headers.signature }}', rightValue: '={{ $json.expected }}', operator: { type: 'string', operation: 'equals' } }],
					combinator: 'and',
				},
				options: {},
			},
		},
		{
			name: 'Remove Duplicates',
			type: 'n8n-nodes-base.removeDuplicates',
			typeVersion: 2,
			// Its history (10,000 keys by default) holds every delivery of one bench run.
			parameters: { operation: 'removeItemsSeenInPreviousExecutions', logic: 'removeItemsWithAlreadySeenKeyValues', dedupeValue: '={{ $json.expected }}', options: {} },
		},
	];
}

export function receiverSetup(credential: { id: string; name: string }, triggerTypeVersion: number): ReceiverSetup {
	const headerAuth = { id: newN8nId(), name: 'bench 5 header auth', type: 'httpHeaderAuth', data: { name: 'x-bench-auth', value: randomUUID() } };
	const diySecret = randomUUID();
	const clinicCredential = { clinicApi: { id: credential.id, name: credential.name } };
	const workflows: Record<Receiver, WorkflowImport> = {
		trigger: workflowOf('bench 5: Clinic Trigger', [
			{
				name: 'Receiver',
				type: CLINIC_TRIGGER_TYPE,
				typeVersion: triggerTypeVersion,
				parameters: { authentication: 'clinicApi', events: [EVENT], options: { allowInsecureUrl: true } },
				credentials: clinicCredential,
			},
		]),
		diy: workflowOf('bench 5: do it yourself', doItYourself(diySecret)),
		bare: workflowOf('bench 5: bare community trigger', [{ name: 'Receiver', type: BARE_TRIGGER_TYPE, typeVersion: 1, parameters: {} }]),
		webhookHeaderAuth: workflowOf('bench 5: Webhook with Header Auth', [
			{
				name: 'Receiver',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2.1,
				parameters: { ...RESPOND, path: `${WEBHOOK_PATH}-header-auth`, authentication: 'headerAuth', options: {} },
				credentials: { httpHeaderAuth: { id: headerAuth.id, name: headerAuth.name } },
			},
		]),
		webhook: workflowOf('bench 5: Webhook', [
			{ name: 'Receiver', type: 'n8n-nodes-base.webhook', typeVersion: 2.1, parameters: { ...RESPOND, path: WEBHOOK_PATH, options: {} } },
		]),
	};
	return { workflows, headerAuth, diySecret };
}

export interface Address {
	url: string;
	headers: (body: Buffer) => Record<string, string>;
}

/** Where each active receiver is reached, and its deliveries' headers (signed as the service signs). */
export function addresses(setup: ReceiverSetup, server: N8nServer, sim: Simulator): Record<Receiver, Address> {
	const subscriptions = sim.subscriptions().filter((s) => s.status === 'enabled' && !s.deleted_at);
	const triggerHook = String(setup.workflows.trigger.nodes[0].webhookId);
	const subscription = subscriptions.find((s) => s.url.includes(triggerHook));
	if (!subscription) throw new Error('the Clinic Trigger has no live subscription at the simulator');
	const secret = subscription.authentication_data.secret;
	const signed = (key: string, extra: Record<string, string> = {}) => (body: Buffer) => ({
		'content-type': 'application/json',
		signature: signDelivery(key, body),
		...extra,
	});
	// n8n's address for a node with a webhook id and no path: <webhookId>/webhook.
	const bareHook = String(setup.workflows.bare.nodes[0].webhookId);
	return {
		trigger: { url: subscription.url, headers: signed(secret) },
		diy: { url: server.webhookUrl(`${WEBHOOK_PATH}-diy`), headers: signed(setup.diySecret) },
		bare: { url: server.webhookUrl(`${bareHook}/webhook`), headers: signed(secret) },
		webhookHeaderAuth: {
			url: server.webhookUrl(`${WEBHOOK_PATH}-header-auth`),
			headers: signed(secret, { [setup.headerAuth.data.name]: setup.headerAuth.data.value }),
		},
		webhook: { url: server.webhookUrl(WEBHOOK_PATH), headers: signed(secret) },
	};
}

/**
 * A fresh event log of `loggedBefore` events of EVENT, and the delivery bodies sent to the
 * receivers: `bodies` makes `n` unique ones, `logEvent` logs one as an event (before it is sent).
 */
export function deliveryLog(sim: Simulator, loggedBefore: number) {
	sim.reset();
	const [suffix, eventName] = EVENT.split(':');
	sim.seedEvents(loggedBefore, suffix, eventName);
	const template = sim.events()[0].value as Record<string, unknown>;
	const logEvent = (body: Buffer) => sim.seedEvents(1, suffix, eventName, () => (JSON.parse(body.toString('utf8')) as { value: unknown }).value);
	const bodies = (tag: string, n: number) =>
		Array.from({ length: n }, (_, i) =>
			Buffer.from(JSON.stringify({ value: { ...template, updated_at: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(), bench: `${tag}-${i}` } })),
		);
	return { logEvent, bodies };
}
