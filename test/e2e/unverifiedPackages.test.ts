/**
 * n8n 3 turns unverified community packages off (`N8N_UNVERIFIED_PACKAGES_ENABLED=false`).
 * n8n 3 ships only as a Docker image, so the setting is tried on n8n 2.41, which has it:
 *
 * - the editor is told (settings `unverifiedCommunityNodesEnabled: false`; Settings →
 *   Community Nodes then offers only verified packages from the nodes panel) and n8n's
 *   install endpoint, the one the screen calls, refuses this package;
 * - a copy installed before still loads on 2.41 and its workflows run (n8n 3 announces that
 *   it will not load it: README, Install).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { N8N_VERSIONS, nodesFolder, packRepository, repositoryPackage, restImportCredentials, startN8n } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { simulatorCredentials } from './support/examples';
import { consultationOnRequestWorkflow } from './support/workflows';

const PACKAGE = repositoryPackage().name;
const PATH = 'clinic-unverified';

describe(`n8n ${N8N_VERSIONS.v2} with N8N_UNVERIFIED_PACKAGES_ENABLED=false`, () => {
	const clinic = useClinicN8n({
		version: N8N_VERSIONS.v2,
		label: 'unverified',
		// Its frontend settings (`/rest/settings`) come with the editor.
		env: { N8N_UNVERIFIED_PACKAGES_ENABLED: 'false', N8N_DISABLE_UI: 'false' },
		simulator: { allowHttpCallbacks: true },
		installPackage: false,
		workflows: () => [
			consultationOnRequestWorkflow({ name: 'Consultation on request (unverified)', path: PATH, webhookId: '5b1f7c2e-0d4a-4e8b-9c3f-6a7b8c9d0e1f' }),
		],
	});
	const { n8n } = clinic;

	it(
		'the Community Nodes install refuses the package, and nothing is installed',
		n8n.run(async (ctx) => {
			const settings = await clinic.server.rest<{ unverifiedCommunityNodesEnabled?: boolean }>('GET', '/settings');
			expect(settings.unverifiedCommunityNodesEnabled).toBe(false);
			await expect(clinic.server.rest('POST', '/community-packages', { name: PACKAGE })).rejects.toThrow(
				/Installation of unverified community packages is forbidden/,
			);
			expect(existsSync(join(nodesFolder(ctx.userFolder), 'node_modules', PACKAGE))).toBe(false);
		}),
	);

	it(
		'a copy installed before the setting still loads, and its workflow runs',
		n8n.run(async (ctx) => {
			await clinic.server.stop();
			ctx.installPackage(packRepository(ctx.rootDir));
			clinic.server = await startN8n(ctx);
			// The workflow's credential, now that n8n knows its type.
			await restImportCredentials(clinic.server, simulatorCredentials(clinic.sim));
			await clinic.server.activateWorkflow(clinic.workflowIds[0]);
			const response = await fetch(clinic.server.webhookUrl(PATH), {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ id: 1 }),
			});
			expect(response.status).toBe(200);
			expect(((await response.json()) as { id?: number }).id).toBe(1);
		}),
	);
});
