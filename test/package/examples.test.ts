import { readFileSync, readdirSync } from 'fs';
import { join } from 'path';

import { Clinic } from '../../nodes/Clinic/Clinic.node';
import { ClinicEventLogTrigger } from '../../nodes/ClinicEventLogTrigger/ClinicEventLogTrigger.node';
import { ClinicTrigger } from '../../nodes/ClinicTrigger/ClinicTrigger.node';

const dir = join(__dirname, '..', '..', 'examples');
const examples = readdirSync(dir)
	.filter((file) => file.endsWith('.json'))
	.map((file) => [file, JSON.parse(readFileSync(join(dir, file), 'utf8'))] as const);

interface ExampleNode {
	name: string;
	type: string;
	parameters: Record<string, unknown>;
	credentials?: Record<string, { id: string }>;
}

const descriptions: Record<string, { properties: Array<{ name: string }> }> = {
	'n8n-nodes-clinic.clinic': new Clinic().description,
	'n8n-nodes-clinic.clinicTrigger': new ClinicTrigger().description,
	'n8n-nodes-clinic.clinicEventLogTrigger': new ClinicEventLogTrigger().description,
};

/** Parameters n8n adds to nodes itself (a polling node's Poll Times). */
const addedByN8n = (type: string): string[] => (descriptions[type] as { polling?: boolean }).polling ? ['pollTimes'] : [];

describe.each(examples)('example %s', (_file, workflow) => {
	it('has a 16-character id like the ones n8n makes (n8n 1.x keeps no trigger data for others)', () => {
		expect(workflow.id).toMatch(/^[A-Za-z0-9]{16}$/);
		for (const node of workflow.nodes as ExampleNode[]) {
			for (const credential of Object.values(node.credentials ?? {})) expect(credential.id).toMatch(/^[A-Za-z0-9]{16}$/);
		}
	});

	it('sets only parameters the Clinic nodes have', () => {
		for (const node of (workflow.nodes as ExampleNode[]).filter((n) => descriptions[n.type])) {
			const known = new Set([...descriptions[node.type].properties.map((property) => property.name), ...addedByN8n(node.type)]);
			expect(Object.keys(node.parameters).filter((name) => !known.has(name))).toEqual([]);
		}
	});

	it('connects every node', () => {
		const names = (workflow.nodes as ExampleNode[]).map((node) => node.name);
		// Every kind of connection counts: main, and an AI agent's model and tools.
		const targets = new Set(
			Object.values(workflow.connections as Record<string, Record<string, Array<Array<{ node: string }>>>>).flatMap((c) =>
				Object.values(c).flatMap((outputs) => outputs.flat().map((link) => link.node)),
			),
		);
		// Sub-nodes (the model, the tools) are connected by their own output to the agent.
		const subNodes = new Set(
			Object.entries(workflow.connections as Record<string, Record<string, unknown>>)
				.filter(([, outputs]) => Object.keys(outputs).some((type) => type.startsWith('ai_')))
				.map(([name]) => name),
		);
		expect(names.slice(1).filter((name) => !targets.has(name) && !subNodes.has(name))).toEqual([]);
	});
});
