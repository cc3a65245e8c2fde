/**
 * Each example opens in the editor with every field in a known state: its parameters are
 * read against the node description of the version it is saved at, the way the editor
 * reads them (which fields are displayed, the type each field holds).
 */
import { readFileSync, readdirSync } from 'fs';
import { join } from 'path';
import { NodeHelpers } from 'n8n-workflow';
import type { INode, INodeProperties, INodePropertyCollection, INodePropertyOptions, INodeTypeDescription } from 'n8n-workflow';

import { Clinic } from '../../nodes/Clinic/Clinic.node';
import { ClinicEventLogTrigger } from '../../nodes/ClinicEventLogTrigger/ClinicEventLogTrigger.node';
import { ClinicTrigger } from '../../nodes/ClinicTrigger/ClinicTrigger.node';

const dir = join(__dirname, '..', '..', 'examples');
const examples = readdirSync(dir)
	.filter((file) => file.endsWith('.json'))
	.map((file) => [file, JSON.parse(readFileSync(join(dir, file), 'utf8'))] as const);

/** The Clinic node as n8n offers it as an AI tool: its own properties plus the tool description pair. */
function asTool(description: INodeTypeDescription): INodeTypeDescription {
	const toolProperties: INodeProperties[] = [
		{
			displayName: 'Tool Description',
			name: 'descriptionType',
			type: 'options',
			options: [
				{ name: 'Set Automatically', value: 'auto' },
				{ name: 'Set Manually', value: 'manual' },
			],
			default: 'auto',
		},
		{ displayName: 'Description', name: 'toolDescription', type: 'string', default: '', displayOptions: { show: { descriptionType: ['manual'] } } },
	];
	return { ...description, name: `${description.name}Tool`, properties: [...toolProperties, ...description.properties] };
}

const clinic = new Clinic().description;
const descriptions: Record<string, INodeTypeDescription> = {
	'n8n-nodes-clinic.clinic': clinic,
	'n8n-nodes-clinic.clinicTool': asTool(clinic),
	'n8n-nodes-clinic.clinicTrigger': new ClinicTrigger().description,
	'n8n-nodes-clinic.clinicEventLogTrigger': new ClinicEventLogTrigger().description,
};

type ExampleNode = Omit<INode, 'parameters'> & { parameters: Record<string, unknown> };

const isExpression = (value: unknown) => typeof value === 'string' && value.startsWith('=');

/** What is wrong with one value for its property, or nothing. */
function problems(property: INodeProperties, value: unknown, path: string): string[] {
	const where = `${path} (${property.type})`;
	switch (property.type) {
		case 'resourceLocator': {
			if (typeof value !== 'object' || value === null) return [`${where}: a plain value where the editor expects {__rl, mode, value}`];
			const locator = value as { __rl?: unknown; mode?: unknown; value?: unknown };
			const modes = (property.modes ?? []).map((mode) => mode.name);
			const found: string[] = [];
			if (locator.__rl !== true) found.push(`${where}: no __rl: true`);
			if (!modes.includes(String(locator.mode))) found.push(`${where}: mode ${String(locator.mode)} is not one of ${modes.join(', ')}`);
			if (typeof locator.value !== 'string' && typeof locator.value !== 'number') found.push(`${where}: value is not a string`);
			return found;
		}
		case 'options': {
			if (isExpression(value)) return [];
			const values = ((property.options ?? []) as INodePropertyOptions[]).map((option) => option.value);
			return values.includes(value as string) ? [] : [`${where}: ${JSON.stringify(value)} is not one of its options`];
		}
		case 'multiOptions': {
			if (isExpression(value)) return [];
			const values = ((property.options ?? []) as INodePropertyOptions[]).map((option) => option.value);
			if (!Array.isArray(value)) return [`${where}: not a list`];
			return value.filter((entry) => !values.includes(entry as string)).map((entry) => `${where}: ${JSON.stringify(entry)} is not one of its options`);
		}
		case 'string':
		case 'dateTime':
		case 'json':
			return typeof value === 'string' ? [] : [`${where}: ${JSON.stringify(value)} is not text`];
		case 'number':
			return typeof value === 'number' || isExpression(value) ? [] : [`${where}: ${JSON.stringify(value)} is not a number`];
		case 'boolean':
			return typeof value === 'boolean' || isExpression(value) ? [] : [`${where}: ${JSON.stringify(value)} is not true or false`];
		case 'collection': {
			if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${where}: not an object`];
			const options = (property.options ?? []) as INodeProperties[];
			return Object.entries(value).flatMap(([key, inner]) => {
				const option = options.find((candidate) => candidate.name === key);
				return option ? problems(option, inner, `${path}.${key}`) : [`${path}.${key}: the collection has no such option`];
			});
		}
		case 'fixedCollection': {
			if (typeof value !== 'object' || value === null) return [`${where}: not an object`];
			const groups = (property.options ?? []) as INodePropertyCollection[];
			return Object.entries(value).flatMap(([key, inner]) => {
				const group = groups.find((candidate) => candidate.name === key);
				if (!group) return [`${path}.${key}: no such group`];
				const entries = Array.isArray(inner) ? inner : [inner];
				return entries.flatMap((entry: Record<string, unknown>) =>
					Object.entries(entry).flatMap(([field, fieldValue]) => {
						const definition = group.values.find((candidate) => candidate.name === field);
						return definition ? problems(definition, fieldValue, `${path}.${key}.${field}`) : [`${path}.${key}.${field}: no such field`];
					}),
				);
			});
		}
		default:
			return [];
	}
}

/**
 * The displayed property of that name (several share a name, one per operation), judged on the
 * parameters with their defaults filled in, as the editor does.
 */
function displayedProperty(description: INodeTypeDescription, node: ExampleNode, name: string): INodeProperties | undefined {
	const values = NodeHelpers.getNodeParameters(description.properties, node.parameters as never, true, false, node as INode, description) ?? {};
	return description.properties.find(
		(property) => property.name === name && NodeHelpers.displayParameter(values, property, node as INode, description, values),
	);
}

const clinicNodes = examples.flatMap(([file, workflow]) =>
	(workflow.nodes as ExampleNode[]).filter((node) => descriptions[node.type]).map((node) => [file, node.name, node] as const),
);

describe('examples open with every field in a known state', () => {
	it('covers the flagship example and the AI tools', () => {
		const files = new Set(clinicNodes.map(([file]) => file));
		expect(files).toContain('consultation-finished-sign-email-pdf.json');
		expect(clinicNodes.some(([, , node]) => node.type === 'n8n-nodes-clinic.clinicTool')).toBe(true);
	});

	it.each(clinicNodes)('%s: %s', (_file, _name, node) => {
		const description = descriptions[node.type];
		const versions = Array.isArray(description.version) ? description.version : [description.version];
		expect(versions).toContain(node.typeVersion);
		const found = Object.entries(node.parameters).flatMap(([name, value]) => {
			if (name === 'pollTimes' && description.polling) return [];
			const property = displayedProperty(description, node, name);
			return property ? problems(property, value, name) : [`${name}: not a field the editor shows for these settings`];
		});
		expect(found).toEqual([]);
	});
});
