/**
 * `n8n start` driven as a user drives it: owner setup on the first start, an API key,
 * then activation through the public API:
 *   1.x  POST /api/v1/workflows/{id}/activate | /deactivate; done when the answer comes
 *        (`active: true`).
 *   2.x  POST /api/v1/workflows/{id}/publish | /unpublish. With the publication service
 *        (the default) the answer comes first and the triggers start afterwards: the
 *        harness polls GET /rest/workflows/{id}/publication-status until `status` is
 *        'published' with `liveVersionId` = the published version (or 'not_published'
 *        after unpublishing). With N8N_USE_WORKFLOW_PUBLICATION_SERVICE=false it is
 *        synchronous, as on 1.x (that endpoint then answers 404).
 * Executions: GET /api/v1/executions?workflowId=..&includeData=true (paged by cursor).
 * 1.x in n8n's end-to-end mode (E2E_TESTS=true) has no public API: the same calls go to
 * the REST API with the owner's cookie (POST /rest/workflows/{id}/activate {versionId} |
 * /deactivate, GET /rest/executions and /rest/executions/{id}, whose data n8n stores and
 * answers in its `flatted` format).
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

import { N8nHarnessError, type N8nContext } from './context';
import { isFinished, readExecutionsWhen, type Execution } from './executions';
import { LoggedProcess } from './processes';
import { fatal, waitFor } from './waitFor';

export const DEFAULT_OWNER = {
	email: 'owner@clinic-e2e.test',
	firstName: 'Clinic',
	lastName: 'Tester',
	password: 'E2e-Password-1234',
};

/** A workflow as the public API returns it (fields used by the tests). */
export interface PublicWorkflow {
	id: string;
	name: string;
	active: boolean;
	/** 2.x: the published version (null when not published). */
	activeVersionId?: string | null;
	versionId?: string;
	nodes: Array<Record<string, unknown>>;
	[key: string]: unknown;
}

/** 2.x publication service: GET /rest/workflows/{id}/publication-status */
export interface PublicationStatus {
	status: 'in_progress' | 'not_published' | 'published' | 'partial' | 'failed';
	liveVersionId: string | null;
	pendingVersionId: string | null;
	triggers: Array<{ nodeId: string; status: string; errorMessage?: string | null }>;
}

export interface StartOptions {
	/** Wait for n8n's status endpoint and the "Editor is now accessible" line (default 3 minutes). */
	timeoutMs?: number;
	/** Extra environment for this process. */
	env?: Record<string, string | undefined>;
	/** Owner + API key right after start (default true). */
	auth?: boolean;
	/** HTTP port (default: the context's); e.g. a second main of a queue-mode setup. */
	port?: number;
}

export interface HttpOptions {
	timeoutMs?: number;
	/** Expected status codes (default: any 2xx). */
	expect?: number[];
	headers?: Record<string, string>;
}

export interface HttpResponse<T = unknown> {
	status: number;
	body: T;
	headers: Headers;
	text: string;
}

/** A running `n8n start`. */
export class N8nServer extends LoggedProcess {
	readonly ctx: N8nContext;
	readonly baseUrl: string;
	/** Milliseconds from spawn until n8n was ready (set by startN8n). */
	startupMs = 0;
	private cookie: string | undefined;
	private readonly browserId = 'n8n-nodes-clinic-e2e';

	/** `process`: the `n8n start` this file spawned, or the pid of one an earlier file of the lane did. */
	constructor(ctx: N8nContext, process: ChildProcess | number, logFile: string, baseUrl = ctx.baseUrl) {
		super(process, logFile);
		this.ctx = ctx;
		this.baseUrl = baseUrl;
	}

	/** Production webhook URL of a Webhook-type node's `path`. */
	webhookUrl(path: string): string {
		return `${this.baseUrl}/webhook/${path.replace(/^\//, '')}`;
	}

	// ------------------------------------------------------------------ HTTP

	/** Any HTTP request to this n8n (absolute path, e.g. '/webhook/x'). */
	async request<T = unknown>(
		method: string,
		path: string,
		body?: unknown,
		options: HttpOptions = {},
	): Promise<HttpResponse<T>> {
		const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
		let payload: string | undefined;
		if (body !== undefined) {
			payload = typeof body === 'string' ? body : JSON.stringify(body);
			headers['content-type'] ??= 'application/json';
		}
		const send = async () =>
			await fetch(`${this.baseUrl}${path}`, { method, headers, body: payload, signal: AbortSignal.timeout(options.timeoutMs ?? 30_000) });
		let response: Response;
		try {
			response = await send().catch(async (error: Error) => {
				// A kept-alive connection n8n closed just as it was reused fails with "fetch failed"
				// before n8n saw the request: a read is sent once more on a new connection.
				if (!['GET', 'HEAD'].includes(method.toUpperCase()) || error.message !== 'fetch failed') throw error;
				return await send();
			});
		} catch (error) {
			const cause = (error as Error & { cause?: Error }).cause?.message;
			throw new N8nHarnessError(`${method} ${path}: ${(error as Error).message}${cause ? ` (${cause})` : ''}`, this.logTail(40));
		}
		const text = await response.text();
		let parsed: unknown = text;
		try {
			parsed = text ? JSON.parse(text) : undefined;
		} catch {
			// not JSON
		}
		const ok = options.expect ? options.expect.includes(response.status) : response.ok;
		if (!ok) {
			throw new N8nHarnessError(
				`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`,
				this.logTail(40),
			);
		}
		return { status: response.status, body: parsed as T, headers: response.headers, text };
	}

	/** Internal REST API (/rest/...), logged in with the owner's cookie. */
	async rest<T = unknown>(method: string, path: string, body?: unknown, options: HttpOptions = {}): Promise<T> {
		if (!this.cookie) await this.login();
		const response = await this.request<{ data: T }>(method, `/rest${path}`, body, {
			...options,
			headers: { cookie: this.cookie!, 'browser-id': this.browserId, ...options.headers },
		});
		return (response.body as { data: T } | undefined)?.data as T;
	}

	/** Public API (/api/v1/...), with the API key. */
	async api<T = unknown>(method: string, path: string, body?: unknown, options: HttpOptions = {}): Promise<T> {
		const apiKey = this.ctx.auth?.apiKey ?? (await this.createApiKey());
		const response = await this.request<T>(method, `/api/v1${path}`, body, {
			...options,
			headers: { 'x-n8n-api-key': apiKey, ...options.headers },
		});
		return response.body;
	}

	// ------------------------------------------------------------------ owner, API key

	private takeCookie(headers: Headers): void {
		const cookies = headers.getSetCookie?.() ?? [headers.get('set-cookie') ?? ''];
		const auth = cookies.map((c) => c.split(';')[0]).find((c) => c.startsWith('n8n-auth='));
		if (!auth) throw new N8nHarnessError('n8n did not set the n8n-auth cookie', this.logTail(20));
		this.cookie = auth;
	}

	/**
	 * Creates the instance owner (first start of a user folder), or logs in when the
	 * context already has one.
	 */
	async setupOwner(owner = DEFAULT_OWNER): Promise<void> {
		if (this.ctx.auth) {
			await this.login();
			return;
		}
		const response = await this.request('POST', '/rest/owner/setup', owner, {
			headers: { 'browser-id': this.browserId },
		});
		this.takeCookie(response.headers);
		this.ctx.auth = { email: owner.email, password: owner.password };
	}

	async login(): Promise<void> {
		if (!this.ctx.auth) {
			await this.setupOwner();
			return;
		}
		const response = await this.request(
			'POST',
			'/rest/login',
			{ emailOrLdapLoginId: this.ctx.auth.email, password: this.ctx.auth.password },
			{ headers: { 'browser-id': this.browserId } },
		);
		this.takeCookie(response.headers);
	}

	/** Creates an API key with every scope the owner may grant; kept on the context. */
	async createApiKey(label = 'clinic-e2e'): Promise<string> {
		if (!this.cookie) await this.login();
		const scopes = await this.rest<string[]>('GET', '/api-keys/scopes');
		const created = await this.rest<{ rawApiKey?: string; apiKey: string }>('POST', '/api-keys', {
			label: `${label}-${Date.now()}`,
			scopes,
			expiresAt: null,
		});
		const key = created.rawApiKey ?? created.apiKey;
		this.ctx.auth!.apiKey = key;
		return key;
	}

	/** Owner (setup or login) and an API key (reused when the context has one). */
	async ensureAuth(): Promise<void> {
		await this.setupOwner();
		if (!this.ctx.auth?.apiKey && this.ctx.publicApi) await this.createApiKey();
	}

	/** n8n's end-to-end mode only: switches a license feature on or off (`PATCH /rest/e2e/feature`). */
	async setE2eFeature(feature: string, enabled = true): Promise<void> {
		if (!this.ctx.e2eMode) throw new N8nHarnessError(`setE2eFeature(${feature}): the context is not in E2E_TESTS mode`);
		await this.request('PATCH', '/rest/e2e/feature', { feature, enabled });
	}

	// ------------------------------------------------------------------ workflows

	async getWorkflow(id: string): Promise<PublicWorkflow> {
		if (!this.ctx.publicApi) return await this.rest<PublicWorkflow>('GET', `/workflows/${id}`);
		return await this.api<PublicWorkflow>('GET', `/workflows/${id}`);
	}

	/** 2.x with the publication service; undefined when the endpoint does not exist. */
	async publicationStatus(id: string): Promise<PublicationStatus | undefined> {
		if (this.ctx.major < 2) return undefined;
		try {
			return await this.rest<PublicationStatus>('GET', `/workflows/${id}/publication-status`, undefined, {
				expect: [200],
			});
		} catch (error) {
			if (/answered 404/.test((error as Error).message)) return undefined;
			throw error;
		}
	}

	/**
	 * Activates (1.x) / publishes (2.x) a workflow and returns once its triggers are live:
	 * on 2.x with the publication service, waits for publication status 'published'.
	 * Throws when n8n reports the publication failed.
	 */
	async activateWorkflow(id: string, options: { timeoutMs?: number } = {}): Promise<PublicWorkflow> {
		const action = this.ctx.major >= 2 ? 'publish' : 'activate';
		const workflow = this.ctx.publicApi
			? await this.api<PublicWorkflow>('POST', `/workflows/${id}/${action}`, {})
			: await this.rest<PublicWorkflow>('POST', `/workflows/${id}/activate`, {
					versionId: (await this.getWorkflow(id)).versionId,
				});
		if (this.ctx.asyncPublication) {
			const versionId = workflow.activeVersionId ?? workflow.versionId;
			await this.waitForPublication(id, versionId ?? undefined, options.timeoutMs);
		} else if (!workflow.active) {
			throw new N8nHarnessError(`workflow ${id}: ${action} answered active=false`, this.logTail(40));
		}
		return workflow;
	}

	/**
	 * 2.x publication service: waits until the workflow is 'published' (with
	 * `liveVersionId` = `versionId` when given). Also useful after a restart, when n8n
	 * re-publishes asynchronously. Throws on 'failed' / 'partial'.
	 */
	async waitForPublication(id: string, versionId?: string, timeoutMs = 60_000): Promise<PublicationStatus> {
		return await waitFor(
			`workflow ${id} to be published`,
			async () => {
				const status = await this.publicationStatus(id);
				if (!status) throw new Error('no publication status (publication service off?)');
				if (status.status === 'failed' || status.status === 'partial') {
					const errors = status.triggers.map((t) => `${t.nodeId}: ${t.status} ${t.errorMessage ?? ''}`);
					throw fatal(
						new N8nHarnessError(`publication of ${id} ${status.status}: ${errors.join('; ')}`, this.logTail(60)),
					);
				}
				if (status.status !== 'published') return undefined;
				if (versionId && status.liveVersionId !== versionId) return undefined;
				return status;
			},
			{ timeoutMs, intervalMs: 200, onTimeout: () => this.logTail(60) },
		);
	}

	/** Deactivates (1.x) / unpublishes (2.x); on 2.x with the service, waits for 'not_published'. */
	async deactivateWorkflow(id: string, options: { timeoutMs?: number } = {}): Promise<PublicWorkflow> {
		const action = this.ctx.major >= 2 ? 'unpublish' : 'deactivate';
		const workflow = this.ctx.publicApi
			? await this.api<PublicWorkflow>('POST', `/workflows/${id}/${action}`, {})
			: await this.rest<PublicWorkflow>('POST', `/workflows/${id}/deactivate`, {});
		if (this.ctx.asyncPublication) {
			await waitFor(
				`workflow ${id} to be unpublished`,
				async () => ((await this.publicationStatus(id))?.status === 'not_published' ? true : undefined),
				{ timeoutMs: options.timeoutMs ?? 60_000, intervalMs: 200, onTimeout: () => this.logTail(60) },
			);
		} else if (workflow.active) {
			throw new N8nHarnessError(`workflow ${id}: ${action} answered active=true`, this.logTail(40));
		}
		return workflow;
	}

	// ------------------------------------------------------------------ executions

	/**
	 * All executions of a workflow, newest first, with their data. In queue mode they come from
	 * the REST API, as the editor's list does: the public API leaves out what the main holds as
	 * running, and a main can hold a run a worker finished as running until it restarts (Bull's
	 * `job.finished()` never answers for a job that completed and was removed before it looked,
	 * OptimalBits/bull#1906, and n8n removes completed jobs by default).
	 */
	async listExecutions(workflowId: string, options: { includeData?: boolean; status?: string } = {}): Promise<Execution[]> {
		if (!this.ctx.publicApi || this.ctx.queueMode) return await this.listExecutionsRest(workflowId, options);
		const executions: Execution[] = [];
		let cursor: string | undefined;
		do {
			const query = new URLSearchParams({
				workflowId,
				includeData: String(options.includeData ?? true),
				limit: '100',
			});
			if (options.status) query.set('status', options.status);
			if (cursor) query.set('cursor', cursor);
			const page = await this.api<{ data: Execution[]; nextCursor?: string | null }>(
				'GET',
				`/executions?${query.toString()}`,
			);
			executions.push(...notListedYet(page.data, executions));
			cursor = page.nextCursor ?? undefined;
		} while (cursor);
		return executions;
	}

	/** listExecutions through the REST API (1.x in end-to-end mode, queue mode), newest first. */
	private async listExecutionsRest(
		workflowId: string,
		options: { includeData?: boolean; status?: string },
	): Promise<Execution[]> {
		const summaries: Execution[] = [];
		// 2.x pages by its cursor (and refuses lastId); 1.x by the lowest id seen.
		let cursor: string | undefined;
		let lastId: string | undefined;
		for (;;) {
			const filter: Record<string, unknown> = { workflowId };
			if (options.status) filter.status = [options.status];
			const query = new URLSearchParams({ filter: JSON.stringify(filter), limit: '100' });
			if (this.ctx.major === 1) {
				// 1.x pages by id only when given both ends of the range. Otherwise it sorts finished runs
				// by start time, and a run that started before the page's runs, with a higher id than
				// one of them, falls between pages (24 of 158 runs went unlisted in a CI run).
				query.set('firstId', '0');
				// The highest id PostgreSQL's integer column holds (a larger number is an error there).
				query.set('lastId', lastId ?? String(2 ** 31 - 1));
			} else if (cursor) {
				query.set('cursor', cursor);
			}
			const page = await this.rest<{ results: Execution[]; nextCursor?: string | null }>('GET', `/executions?${query.toString()}`);
			const fresh = notListedYet(page.results, summaries);
			summaries.push(...fresh);
			if (page.nextCursor !== undefined) {
				if (!page.nextCursor) break;
				cursor = page.nextCursor;
			} else {
				if (fresh.length === 0) break;
				lastId = String(Math.min(...fresh.map((e) => Number(e.id))));
			}
		}
		summaries.sort((a, b) => Number(b.id) - Number(a.id));
		if (options.includeData === false) return summaries;
		return await Promise.all(summaries.map(async (summary) => await this.finishedOrFresh(summary)));
	}

	/** Finished executions, read once each: the REST list has no data, and a finished run no longer changes. */
	private readonly finishedExecutions = new Map<string, Execution>();

	private async finishedOrFresh(summary: Execution): Promise<Execution> {
		const known = this.finishedExecutions.get(String(summary.id));
		if (known && isFinished(summary)) return known;
		const execution = await this.getExecution(summary.id);
		if (isFinished(execution) && execution.data) this.finishedExecutions.set(String(execution.id), execution);
		return execution;
	}

	/** One execution with its data, through the REST API (both versions, any mode). */
	async getExecution(id: string | number): Promise<Execution> {
		// n8n's own copy of `flatted`, the format it stores and answers execution data in.
		const flatted = require(join(this.ctx.install.dir, 'node_modules', 'flatted')) as { parse(text: string): unknown };
		const full = await this.rest<Execution & { data?: unknown }>('GET', `/executions/${id}`);
		const data = typeof full.data === 'string' ? (flatted.parse(full.data) as Execution['data']) : full.data;
		return { ...full, data } as Execution;
	}

	/**
	 * Waits until the workflow has at least `count` finished executions (not running or
	 * waiting) and returns them, newest first.
	 */
	async waitForExecutions(workflowId: string, count: number, options: { timeoutMs?: number } = {}): Promise<Execution[]> {
		const finished = (executions: Execution[]) => executions.filter(isFinished);
		return await readExecutionsWhen(this, workflowId, `${count} execution(s) of workflow ${workflowId}`, {
			ready: (listed) => finished(listed).length >= count,
			pick: (executions) => (finished(executions).length >= count ? finished(executions) : undefined),
			timeoutMs: options.timeoutMs ?? 60_000,
			detail: () => this.logTail(40),
		});
	}
}

/**
 * The executions of `page` not among `known`, each once. n8n 1.x may list an execution
 * twice, within one page too: the running ones first, and one that finished meanwhile among
 * the finished ones as well.
 */
function notListedYet<T extends { id: unknown }>(page: T[], known: T[]): T[] {
	const seen = new Set(known.map((e) => String(e.id)));
	return page.filter((e) => !seen.has(String(e.id)) && seen.add(String(e.id)));
}

/** n8n's status endpoint answers OK (true), else undefined: for `waitFor`. */
export async function answersStatus(baseUrl: string): Promise<true | undefined> {
	const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) });
	return response.ok ? true : undefined;
}

/**
 * Starts `n8n start` in the context, waits for n8n's status endpoint and for its "Editor is now
 * accessible" line (printed after it activated the active workflows, or on 2.x after
 * the publication service started), then sets up the owner and an API key.
 */
export async function startN8n(ctx: N8nContext, options: StartOptions = {}): Promise<N8nServer> {
	const port = options.port ?? ctx.port;
	const env = options.port === undefined ? options.env : { ...options.env, N8N_PORT: String(port) };
	const { child, logFile } = await ctx.spawnN8n(['start'], { logName: 'start', env });
	const baseUrl = `http://127.0.0.1:${port}`;
	const server = new N8nServer(ctx, child, logFile, baseUrl);
	const started = Date.now();
	const timeoutMs = options.timeoutMs ?? 3 * 60_000;
	try {
		await waitFor(
			`n8n ${ctx.version} to start on ${baseUrl}`,
			async () => {
				if (!server.running) {
					throw fatal(
						new N8nHarnessError(
							`n8n ${ctx.version} exited (${child.exitCode ?? child.signalCode}) while starting`,
							server.logTail(80),
						),
					);
				}
				if (!/Editor is now accessible via/.test(server.log())) return undefined;
				return await answersStatus(baseUrl);
			},
			{ timeoutMs, intervalMs: 250, onTimeout: () => server.logTail(80) },
		);
	} catch (error) {
		await server.stop(5_000);
		throw error;
	}
	server.startupMs = Date.now() - started;
	if (options.auth !== false) await server.ensureAuth();
	return server;
}
