/**
 * Credentials and workflows taken into a running n8n through its REST API, as the editor
 * saves them: no `n8n import:*` process, each of which boots n8n (seconds of CPU).
 *   POST  /rest/credentials {name, type, data}        n8n encrypts `data`, gives its own id
 *   PATCH /rest/credentials/{id} {name, type, data}   replaces `data` (a stored session too)
 *   POST  /rest/workflows {name, nodes, connections, settings, pinData, active: false}   own id
 * Unlike the CLI, n8n keeps no id given to it, so the ids an import gives credentials are
 * mapped to n8n's in each workflow's nodes (the fixtures name credentials by fixed ids). As
 * with the CLI: a credential imported again under its id is updated, and a workflow may name
 * a credential imported after it (it is given n8n's id then).
 */
import type { CredentialImport, WorkflowImport } from './cli';
import type { N8nContext } from './context';
import type { N8nServer } from './server';

type Nodes = WorkflowImport['nodes'];
type CredentialRef = { id?: string | null; name?: string } | string | null;

interface Imported {
	/** n8n's id of each credential, by the id its import gave it. */
	credentials: Map<string, string>;
	/** Workflows naming a credential id no import has given yet, by that id. */
	waiting: Map<string, Set<string>>;
}

/** Per context: its database outlives each n8n process, so the ids do too. */
const importedIn = new WeakMap<N8nContext, Imported>();

function importedOf(ctx: N8nContext): Imported {
	let imported = importedIn.get(ctx);
	if (!imported) {
		imported = { credentials: new Map(), waiting: new Map() };
		importedIn.set(ctx, imported);
	}
	return imported;
}

/**
 * n8n's id of the credential imported as `id` through the REST API; `id` itself otherwise
 * (the CLI import keeps the ids it is given).
 */
export function importedCredentialId(ctx: N8nContext, id: string): string {
	return importedIn.get(ctx)?.credentials.get(id) ?? id;
}

/**
 * The nodes with each credential id found in `ids` replaced by n8n's, and the ids that are
 * neither a given one nor one of n8n's (`unknown`).
 */
export function withImportedCredentialIds(nodes: Nodes, ids: ReadonlyMap<string, string>): { nodes: Nodes; unknown: string[] } {
	const ownIds = new Set(ids.values());
	const unknown = new Set<string>();
	const mapped = nodes.map((node) => {
		const credentials = node.credentials as Record<string, CredentialRef> | undefined;
		if (!credentials || typeof credentials !== 'object') return node;
		const entries = Object.entries(credentials).map(([type, ref]) => {
			const id = typeof ref === 'object' && ref !== null ? ref.id : undefined;
			if (!id || ownIds.has(id)) return [type, ref];
			const created = ids.get(id);
			if (created) return [type, { ...(ref as object), id: created }];
			unknown.add(id);
			return [type, ref];
		});
		return { ...node, credentials: Object.fromEntries(entries) };
	});
	return { nodes: mapped, unknown: [...unknown] };
}

/**
 * Creates the credentials in the running n8n, in their order (n8n offers a new node the most
 * recent one), or updates one imported before under the same id. Returns them with n8n's ids.
 */
export async function restImportCredentials(
	server: N8nServer,
	credentials: CredentialImport[],
): Promise<Array<CredentialImport & { id: string }>> {
	const imported = importedOf(server.ctx);
	const result: Array<CredentialImport & { id: string }> = [];
	for (const credential of credentials) {
		const body = { name: credential.name, type: credential.type, data: credential.data };
		const known = credential.id ? imported.credentials.get(credential.id) : undefined;
		if (known) {
			await server.rest('PATCH', `/credentials/${known}`, body);
			result.push({ ...credential, id: known });
			continue;
		}
		const created = await server.rest<{ id: string }>('POST', '/credentials', body);
		if (credential.id) {
			imported.credentials.set(credential.id, created.id);
			await giveWaitingWorkflows(server, credential.id);
		}
		result.push({ ...credential, id: created.id });
	}
	return result;
}

/** The workflows that named `givenId` before it was imported get n8n's id for it. */
async function giveWaitingWorkflows(server: N8nServer, givenId: string): Promise<void> {
	const imported = importedOf(server.ctx);
	for (const workflowId of imported.waiting.get(givenId) ?? []) {
		const current = await server.rest<{ nodes: Nodes; versionId?: string }>('GET', `/workflows/${workflowId}`);
		const { nodes } = withImportedCredentialIds(current.nodes, imported.credentials);
		await server.rest('PATCH', `/workflows/${workflowId}`, { nodes, versionId: current.versionId });
	}
	imported.waiting.delete(givenId);
}

/**
 * Creates the workflows in the running n8n (each a new one: n8n gives it its id), their
 * credentials named by n8n's ids; those imported `active: true` are then activated (2.x:
 * published) as n8n's start activates them after a CLI import. Returns n8n's ids, in order.
 */
export async function restImportWorkflows(server: N8nServer, workflows: WorkflowImport[]): Promise<string[]> {
	const imported = importedOf(server.ctx);
	const ids: string[] = [];
	for (const workflow of workflows) {
		const { nodes, unknown } = withImportedCredentialIds(workflow.nodes, imported.credentials);
		const { name, connections, settings = {}, pinData, staticData, meta } = workflow;
		// Created inactive (1.x wants that said); activated below once all are there.
		const body = { name, nodes, connections, settings, pinData, staticData, meta, active: false };
		const created = await server.rest<{ id: string }>('POST', '/workflows', body);
		for (const id of unknown) imported.waiting.set(id, (imported.waiting.get(id) ?? new Set()).add(created.id));
		ids.push(created.id);
	}
	for (const [index, workflow] of workflows.entries()) if (workflow.active) await server.activateWorkflow(ids[index]);
	return ids;
}
