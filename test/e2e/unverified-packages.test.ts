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

import { startSimulator, type Simulator } from '../simulator';
import {
	N8N_VERSIONS,
	importCredentials,
	importWorkflows,
	nodesFolder,
	packRepository,
	repositoryPackage,
	startN8n,
	useN8nContext,
	type N8nServer,
} from './harness';
import { simulatorCredentials } from './support/examples';
import { consultationOnRequestWorkflow } from './support/workflows';

const PACKAGE = repositoryPackage().name;
const PATH = 'clinic-unverified';

describe(`n8n ${N8N_VERSIONS.v2} with N8N_UNVERIFIED_PACKAGES_ENABLED=false`, () => {
	let sim: Simulator;
	let server: N8nServer;
	let workflowId = '';

	const n8n = useN8nContext(
		{ version: N8N_VERSIONS.v2, label: 'unverified', env: { N8N_UNVERIFIED_PACKAGES_ENABLED: 'false' } },
		async (ctx) => {
			sim = await startSimulator({ allowHttpCallbacks: true });
			await importCredentials(ctx, simulatorCredentials(sim));
			[workflowId] = await importWorkflows(ctx, [
				consultationOnRequestWorkflow({ name: 'Consultation on request (unverified)', path: PATH, webhookId: '5b1f7c2e-0d4a-4e8b-9c3f-6a7b8c9d0e1f' }),
			]);
			server = n8n.track(await startN8n(ctx));
		},
	);

	afterAll(async () => {
		await sim?.close();
	});

	it(
		'the Community Nodes install refuses the package, and nothing is installed',
		n8n.run(async (ctx) => {
			const settings = await server.rest<{ unverifiedCommunityNodesEnabled?: boolean }>('GET', '/settings');
			expect(settings.unverifiedCommunityNodesEnabled).toBe(false);
			await expect(server.rest('POST', '/community-packages', { name: PACKAGE })).rejects.toThrow(
				/Installation of unverified community packages is forbidden/,
			);
			expect(existsSync(join(nodesFolder(ctx.userFolder), 'node_modules', PACKAGE))).toBe(false);
		}),
	);

	it(
		'a copy installed before the setting still loads, and its workflow runs',
		n8n.run(async (ctx) => {
			await server.stop();
			ctx.installPackage(packRepository(ctx.rootDir));
			server = n8n.track(await startN8n(ctx));
			await server.activateWorkflow(workflowId);
			const response = await fetch(server.webhookUrl(PATH), {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ id: 1 }),
			});
			expect(response.status).toBe(200);
			expect(((await response.json()) as { id?: number }).id).toBe(1);
		}),
	);
});
