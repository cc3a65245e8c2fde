/**
 * What n8n's editor makes of the descriptions: canvas subtitles (evaluated by n8n's own
 * expression engine) and the trigger's "On …" names (n8n's node creator takes an event
 * option's `action`, else "On " plus the option name in lower case).
 */
import '../helpers/n8nEnv';

import { NodeHelpers, Workflow } from 'n8n-workflow';
import type { INode, INodeParameters, INodePropertyOptions } from 'n8n-workflow';

import { ClinicApi } from '../../credentials/ClinicApi.credentials';
import { ClinicPatientPortalApi } from '../../credentials/ClinicPatientPortalApi.credentials';
import { ClinicRefreshTokenApi } from '../../credentials/ClinicRefreshTokenApi.credentials';
import { Clinic } from '../../nodes/Clinic/Clinic.node';
import { ClinicTrigger } from '../../nodes/ClinicTrigger/ClinicTrigger.node';
import { describeBaseUrlProblem, insecureWebhookAddressMessage, missingWebhookServiceUrlMessage } from '../../nodes/shared/urls';
import { CLINIC_NODE_TYPE, CLINIC_TRIGGER_NODE_TYPE, TestNodeTypes } from '../helpers';

function subtitle(type: string, template: string, parameters: INodeParameters): unknown {
	const node: INode = { id: 'n', name: 'Node', type, typeVersion: 1, position: [0, 0], parameters };
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes: new TestNodeTypes() });
	return workflow.expression.getSimpleParameterValue(node, template, 'internal', {});
}

describe('canvas subtitles', () => {
	const clinic = new Clinic().description.subtitle as string;
	const trigger = new ClinicTrigger().description.subtitle as string;

	it.each([
		['invoice', 'getByEncounter', 'Invoice: Get by Encounter'],
		['webhookSubscription', 'getAll', 'Webhook Subscription: Get Many'],
		['patientPortal', 'verifyCode', 'Patient Portal: Verify Code'],
	])('Clinic %s/%s reads "%s"', (resource, operation, expected) => {
		expect(subtitle(CLINIC_NODE_TYPE, clinic, { resource, operation })).toBe(expected);
	});

	it('Clinic Trigger names the chosen events as the panel does', () => {
		expect(
			subtitle(CLINIC_TRIGGER_NODE_TYPE, trigger, {
				events: ['consultation:consultation-finished', 'consultation-schedule:consultation-schedule-create'],
			}),
		).toBe('Consultation Finished, Appointment Created');
		expect(subtitle(CLINIC_TRIGGER_NODE_TYPE, trigger, { events: [] })).toBe('');
	});
});

describe('trigger names in the node creator', () => {
	// n8n 2.41 editor: displayName = option.action ?? "On " + lowerCase(option.name).
	const events = new ClinicTrigger().description.properties.find((property) => property.name === 'events');
	const names = ((events?.options ?? []) as INodePropertyOptions[]).map((option) => option.action ?? `On ${option.name.toLowerCase()}`);

	it('read like n8n\'s own, without topic words repeated', () => {
		expect(names).toContain('On consultation finished');
		expect(names).toContain('On appointment created');
		expect(names).toContain('On charge created');
		expect(names).toContain('On patient joined waiting room');
		for (const name of names) {
			const words = name.split(' ');
			expect(new Set(words).size).toBe(words.length);
			expect(name).not.toMatch(/[-:()]/);
		}
	});
});

describe('address messages that say the fix', () => {
	it('a base URL without a scheme', () => {
		expect(describeBaseUrlProblem('api.example.com/api/v1', 'Base URL')).toBe(
			'Base URL "api.example.com/api/v1" has no https:// at the start: enter it as https://api.example.com/api/v1',
		);
		expect(describeBaseUrlProblem('localhost:3000', 'Base URL')).toContain('has no https:// at the start');
		expect(describeBaseUrlProblem('https://api.example.com', 'Base URL')).toBeUndefined();
		expect(describeBaseUrlProblem('http://127.0.0.1:3000', 'Base URL')).toBeUndefined();
	});

	it('an http webhook address names WEBHOOK_URL and Allow Insecure URL in the message itself', () => {
		const { message } = insecureWebhookAddressMessage('http://localhost:5678/webhook-test/abc/webhook');
		expect(message).toContain('http://localhost:5678/webhook-test/abc/webhook');
		expect(message).toContain('WEBHOOK_URL');
		expect(message).toContain('Allow Insecure URL');
	});

	it('a missing webhook service address is named as such', () => {
		expect(missingWebhookServiceUrlMessage().message).toBe('The Clinic credential has no Webhook Service Base URL');
	});
});

describe('as an AI agent tool', () => {
	const description = new Clinic().description;
	// n8n names the tool variant of a node type "<name>Tool"; `@tool` display conditions read that.
	const asTool = { ...description, name: `${description.name}Tool` };
	const defaults = (type: typeof description, resource: string, operation: string) =>
		NodeHelpers.getNodeParameters(type.properties, { resource, operation }, true, false, { typeVersion: 1 }, type) ?? {};

	it.each([
		['consultation', 'get'],
		['event', 'getAll'],
	])('%s %s starts simplified as a tool, whole in a workflow (saved workflows unchanged)', (resource, operation) => {
		expect(defaults(asTool, resource, operation).simplify).toBe(true);
		expect(defaults(description, resource, operation).simplify).toBe(false);
	});
});

describe('action names', () => {
	const description = new Clinic().description;
	const operations = description.properties
		.filter((property) => property.name === 'operation')
		.flatMap((property) =>
			((property.options ?? []) as INodePropertyOptions[]).map((option) => ({
				resource: String(property.displayOptions?.show?.resource?.[0]),
				operation: String(option.value),
				action: String(option.action),
			})),
		);

	it('every operation has a short action in n8n\'s style: a verb, an article or "many", a few words', () => {
		expect(operations.length).toBeGreaterThan(15);
		for (const { action } of operations) {
			expect(action).toMatch(/^(Get|Add|Create|Delete|Update|Sign|Email|Download|Send|Verify|Prescribe) /);
			expect(action.length).toBeLessThanOrEqual(36);
			expect(action).not.toMatch(/such as|\bID\b|\d/);
		}
	});

	it.each([
		['invoice', 'sign', 'Sign an invoice'],
		['invoice', 'email', 'Email an invoice'],
		['consultation', 'get', 'Get a consultation'],
	])('n8n names a node added for %s %s "%s", and its tool "… in Clinic"', (resource, operation, name) => {
		const parameters = { resource, operation };
		expect(NodeHelpers.makeNodeName(parameters, description)).toBe(name);
		// A tool left on "Set Automatically" is described to the model as the action in Clinic.
		expect(NodeHelpers.getToolDescriptionForNode({ parameters } as never, { description } as never)).toBe(`${name} in Clinic`);
	});
});

describe('panel words', () => {
	it('every resource has a one-line description', () => {
		const resource = new Clinic().description.properties.find((property) => property.name === 'resource');
		for (const option of (resource?.options ?? []) as INodePropertyOptions[]) {
			expect(option.description).toMatch(/^[A-Z].{10,90}$/);
		}
	});
});

describe('credential fields', () => {
	it('every field a person fills in says where its value comes from', () => {
		for (const credential of [new ClinicApi(), new ClinicRefreshTokenApi(), new ClinicPatientPortalApi()]) {
			for (const property of credential.properties.filter((candidate) => candidate.type !== 'hidden')) {
				expect([credential.name, property.name, property.description ?? '']).toEqual([
					credential.name,
					property.name,
					expect.stringMatching(/gave you|given by|from the|support|set up for n8n|of that account|Verify Code/),
				]);
			}
		}
	});
});

describe("the nodes panel's first sentence", () => {
	// n8n's node creator (editor-ui useActionsGeneration.ts, generateMergedNodesAndActions, in
	// 1.123 and 2.41) merges a trigger named "<app>Trigger" into the app's action node and
	// shows the trigger's description above the app's actions and trigger events.
	const shownFor = (action: { name: string }, triggers: Array<{ name: string; description: string }>) =>
		triggers.find((trigger) => trigger.name.replace('Trigger', '') === action.name)?.description;

	it('the Clinic app shows a sentence that fits its actions and its trigger events', () => {
		const clinic = new Clinic().description;
		const trigger = new ClinicTrigger().description;
		const shown = shownFor(clinic, [trigger]);
		expect(shown).toBe(trigger.description);
		expect(shown).toMatch(/^Work with patients, consultations, prescriptions, charges, CFDI invoices/);
		expect(shown).toMatch(/or start a workflow when it reports an event$/);
	});
});

describe('id fields in the Clinic tool (an AI agent or MCP server uses the node as "clinicTool")', () => {
	const clinic = new Clinic().description;
	// n8n shows `@tool` fields when the node type's name ends in "Tool", as its tool version's does.
	const tool = { ...clinic, name: 'clinicTool' };
	const values = { authentication: 'clinicApi', resource: 'invoice', operation: 'sign' };
	const parametersOf = (description: typeof clinic) =>
		NodeHelpers.getNodeParameters(description.properties, values, true, false, { typeVersion: 1.1 }, description)!;

	it('the Clinic node keeps its resource locator', () => {
		expect(parametersOf(clinic).invoiceId).toEqual({ __rl: true, mode: 'id', value: '' });
	});

	it('the tool is given the id by the model, as a described number', () => {
		expect(parametersOf(tool).invoiceId).toBe(
			"={{ /*n8n-auto-generated-fromAI-override*/ $fromAI('Invoice_ID', `The invoice ID, a whole number such as 42`, 'number') }}",
		);
	});

	it('every id locator has its tool twin, typed number', () => {
		const locators = clinic.properties.filter((property) => property.type === 'resourceLocator');
		expect(locators.length).toBeGreaterThanOrEqual(10);
		for (const locator of locators) {
			const twins = clinic.properties.filter((property) => property.name === locator.name && property.type === 'number');
			expect(twins.length).toBeGreaterThanOrEqual(1);
			for (const twin of twins) expect(twin.default).toMatch(/\$fromAI\('\w+', `The [a-z ]+ ID, a whole number such as \d+`, 'number'\)/);
		}
	});
});
