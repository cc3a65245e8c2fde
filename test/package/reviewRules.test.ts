/**
 * Rules of n8n's community-node lint newer than the one installed here (n8n's main branch,
 * docs/verification-checklist.md lists each), checked on what the nodes describe:
 * - single-credential-per-node: a node's credentials are told apart by one property, each
 *   shown for other values of it;
 * - require-continue-on-fail: the action node's execute() reads Continue On Fail itself.
 * And the saved nodes this must keep running: a Get People node as the editor saved it before
 * (no Authentication: it was hidden there) still shows, and so uses, its portal credential.
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

it("the action node's execute() reads Continue On Fail itself (require-continue-on-fail)", () => {
	const source = readFileSync(join(__dirname, '..', '..', 'nodes', 'Clinic', 'Clinic.node.ts'), 'utf8');
	const execute = source.slice(source.indexOf('async execute('));
	expect(execute.slice(0, execute.indexOf('\n\t}'))).toContain('this.continueOnFail()');
});

describe('a Get People node as the editor saved it before (no Authentication parameter)', () => {
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

	it.each([1, 1.1])('version %s: Authentication is the portal token and the portal credential is the one n8n lets it read', (version) => {
		expect(shown({ resource: 'patientPortal', operation: 'getPeople' }, version)).toEqual({
			authentication: 'clinicPatientPortalApi',
			credentials: ['clinicPatientPortalApi'],
		});
	});

	it("a node switched to Get People holding None: no staff API Base URL (Get People's run says to set Portal Token)", () => {
		const baseUrl = description.properties.find((property) => property.name === 'baseUrl')!;
		const parameters = { authentication: 'none', resource: 'patientPortal', operation: 'getPeople' };
		const node: INode = { id: 'n', name: 'Clinic', type: 'n8n-nodes-clinic.clinic', typeVersion: 1.1, position: [0, 0], parameters };
		expect(NodeHelpers.displayParameter(parameters, baseUrl, node, description, parameters)).toBe(false);
	});

	it('with the token from an earlier step, no credential', () => {
		expect(shown({ resource: 'patientPortal', operation: 'getPeople', tokenSource: 'parameter' }, 1.1).credentials).toEqual([]);
	});

	it('a staff operation saved before keeps Password, and its credential', () => {
		expect(shown({ resource: 'invoice', operation: 'get' }, 1.1)).toEqual({ authentication: 'clinicApi', credentials: ['clinicApi'] });
		expect(shown({ resource: 'invoice', operation: 'get', authentication: 'clinicRefreshTokenApi' }, 1)).toEqual({
			authentication: 'clinicRefreshTokenApi',
			credentials: ['clinicRefreshTokenApi'],
		});
	});
});
