/** The repository's example workflows, pointed at a running simulator. */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { passwordCredentialData } from '../../simulator';
import type { Simulator } from '../../simulator';
import type { CredentialImport, WorkflowImport } from '../harness';
import { REPO_ROOT } from '../harness';

export const EXAMPLES_DIR = join(REPO_ROOT, 'examples');

/** The address the examples use for public operations: the demo simulator's. */
const DEMO_API_BASE = 'http://127.0.0.1:4010/api/v1';

export const DEMO_CREDENTIAL_IDS = {
	clinicApi: 'clinicDemoApi001',
	clinicPatientPortalApi: 'clinicDemoPortal',
	openAiApi: 'openAiDemoModel1',
} as const;

/** The OpenAI credential of the AI agent example, pointed at a scripted model (support/fakeModel.ts). */
export function fakeModelCredential(baseUrl: string): CredentialImport {
	return {
		id: DEMO_CREDENTIAL_IDS.openAiApi,
		name: 'OpenAI (scripted test model)',
		type: 'openAiApi',
		data: { apiKey: 'sk-scripted-model', url: baseUrl },
	};
}

export function exampleFiles(): string[] {
	return readdirSync(EXAMPLES_DIR).filter((file) => file.endsWith('.json'));
}

/** An example as n8n imports it, with the simulator's address in place of the demo's. */
export function loadExample(file: string, sim: Pick<Simulator, 'apiBaseUrl'>): WorkflowImport {
	const text = readFileSync(join(EXAMPLES_DIR, file), 'utf8').split(DEMO_API_BASE).join(sim.apiBaseUrl);
	return JSON.parse(text) as WorkflowImport;
}

/** The credentials the examples refer to, filled with the simulator's accounts. */
export function simulatorCredentials(
	sim: Pick<Simulator, 'apiBaseUrl' | 'webhooksBaseUrl' | 'topicPrefix' | 'demo'>,
	portalToken?: string,
): CredentialImport[] {
	const credentials: CredentialImport[] = [
		{
			id: DEMO_CREDENTIAL_IDS.clinicApi,
			name: 'Clinic API (simulator)',
			type: 'clinicApi',
			data: passwordCredentialData(sim),
		},
	];
	if (portalToken) {
		credentials.push({
			id: DEMO_CREDENTIAL_IDS.clinicPatientPortalApi,
			name: 'Clinic Patient Portal (simulator)',
			type: 'clinicPatientPortalApi',
			data: { baseUrl: sim.apiBaseUrl, portalToken },
		});
	}
	return credentials;
}
