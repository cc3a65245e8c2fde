/**
 * Rules of n8n's community-node lint newer than the one installed here (n8n's main branch,
 * docs/verification-checklist.md lists each), checked on what the nodes describe:
 * - single-credential-per-node: a node's credentials are told apart by one property, each
 *   shown for other values of it;
 * - require-continue-on-fail: the action node's execute() reads Continue On Fail itself.
 * And what must hold with them: n8n's editor finds no main authentication field in the
 * Clinic node (it would hide Authentication, Resource and Operation), and each saved node
 * shows the credential it uses, which n8n checks before it lets a node read one.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { NodeHelpers } from 'n8n-workflow';
import type { INode, INodeCredentialDescription, INodeParameters, INodeTypeDescription } from 'n8n-workflow';

import { Clinic } from '../../nodes/Clinic/Clinic.node';
import { ClinicEventLogTrigger } from '../../nodes/ClinicEventLogTrigger/ClinicEventLogTrigger.node';
import { ClinicTrigger } from '../../nodes/ClinicTrigger/ClinicTrigger.node';

const nodes: Array<[string, INodeTypeDescription]> = [
	['Clinic', new Clinic().description],
	['Clinic Trigger', new ClinicTrigger().description],
	['Clinic Event Log Trigger', new ClinicEventLogTrigger().description],
];

/** Whether some property in both `show` conditions has no value in common. */
function exclusive(one: INodeCredentialDescription, other: INodeCredentialDescription): boolean {
	const a = one.displayOptions?.show ?? {};
	const b = other.displayOptions?.show ?? {};
	return Object.keys(a).some((key) => key in b && !(a[key] ?? []).some((value) => (b[key] ?? []).includes(value)));
}

describe.each(nodes)('%s', (_name, description) => {
	it('tells its credentials apart by one property (single-credential-per-node)', () => {
		const credentials = description.credentials ?? [];
		const overlapping: string[] = [];
		for (const [i, one] of credentials.entries()) {
			for (const other of credentials.slice(i + 1)) if (!exclusive(one, other)) overlapping.push(`${one.name} / ${other.name}`);
		}
		expect(overlapping).toEqual([]);
		if (credentials.length > 1) {
			const keys = credentials.map((credential) => Object.keys(credential.displayOptions?.show ?? {}));
			expect(keys.every((shown) => shown.includes('authentication'))).toBe(true);
		}
	});
});

it("n8n's editor finds no main authentication field in the Clinic node: every Authentication it has offers None", () => {
	// The editor (editor-ui nodeTypesUtils.ts, getMainAuthField) takes the first credential-choosing
	// property named authentication that offers no None; it then hides the parameters that property depends on.
	const description = new Clinic().description;
	const choosing = new Set((description.credentials ?? []).flatMap((credential) => Object.keys(credential.displayOptions?.show ?? {})));
	const authentications = description.properties.filter((property) => property.name === 'authentication' && choosing.has(property.name));
	expect(authentications.length).toBeGreaterThan(1);
	const withoutNone = authentications.filter((property) => !(property.options ?? []).some((option) => 'value' in option && option.value === 'none'));
	expect(withoutNone.map((property) => property.displayOptions)).toEqual([]);
});

it("the action node's execute() reads Continue On Fail itself (require-continue-on-fail)", () => {
	const source = readFileSync(join(__dirname, '..', '..', 'nodes', 'Clinic', 'Clinic.node.ts'), 'utf8');
	const execute = source.slice(source.indexOf('async execute('));
	expect(execute.slice(0, execute.indexOf('\n\t}'))).toContain('this.continueOnFail()');
});

describe('the credential a saved Clinic node shows (n8n lets a node read only a credential it shows)', () => {
	const description = new Clinic().description;
	const shown = (parameters: INodeParameters, typeVersion: number) => {
		const node: INode = { id: 'n', name: 'Clinic', type: 'n8n-nodes-clinic.clinic', typeVersion, position: [0, 0], parameters };
		// What n8n does when it loads a workflow: the defaults filled in (Workflow's constructor).
		const resolved = NodeHelpers.getNodeParameters(description.properties, parameters, true, false, node, description) ?? {};
		const credentials = (description.credentials ?? []).filter((credential) =>
			NodeHelpers.displayParameter(resolved, credential, node, description, resolved),
		);
		return { authentication: resolved.authentication, credentials: credentials.map((credential) => credential.name) };
	};

	it.each([1, 1.1, 1.2])('version %s: Get People saved without Authentication, its portal credential', (version) => {
		expect(shown({ resource: 'patientPortal', operation: 'getPeople' }, version)).toEqual({
			authentication: 'clinicPatientPortalApi',
			credentials: ['clinicPatientPortalApi'],
		});
	});

	it('version 1.2: Get People with Authentication None (the token of an earlier step), no credential', () => {
		expect(shown({ resource: 'patientPortal', operation: 'getPeople', authentication: 'none' }, 1.2).credentials).toEqual([]);
	});

	it('before 1.2, Portal Token From: Earlier Step, no credential', () => {
		expect(shown({ resource: 'patientPortal', operation: 'getPeople', tokenSource: 'parameter' }, 1.1).credentials).toEqual([]);
	});

	it('a staff operation: Password unless it holds another Authentication, and that credential', () => {
		expect(shown({ resource: 'invoice', operation: 'get' }, 1.1)).toEqual({ authentication: 'clinicApi', credentials: ['clinicApi'] });
		expect(shown({ resource: 'invoice', operation: 'get', authentication: 'clinicRefreshTokenApi' }, 1)).toEqual({
			authentication: 'clinicRefreshTokenApi',
			credentials: ['clinicRefreshTokenApi'],
		});
	});
});
