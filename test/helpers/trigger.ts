/**
 * The Clinic Trigger's two lives in n8n, through n8n-core's real contexts:
 *
 * - `runTriggerHook`: what n8n's WebhookService.runWebhookMethod does on activation and
 *   deactivation: `webhookMethods.default[method].call(new HookContext(...))`. The
 *   workflow's static data is the object the test keeps; n8n saves it only when it
 *   changed (`__dataChanged`), and the returned `staticData` is what it saved, so passing
 *   it to the next call simulates an n8n restart.
 * - `deliverWebhook`: what WebhookService.runWebhook and WebhookHelpers.executeWebhook do
 *   for an incoming request: `nodeType.webhook.call(new WebhookContext(...))` with an
 *   express-like request (`rawBody`, `headers`, `query`, `body`) and a response that
 *   records what the node wrote, then n8n's default answer when the node did not answer.
 */
import './n8nEnv';

import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { HookContext, WebhookContext } from 'n8n-core';
import { NodeHelpers, Workflow, deepCopy } from 'n8n-workflow';
import type {
	IDataObject,
	IHttpRequestMethods,
	INode,
	INodeExecutionData,
	INodeParameters,
	INodeType,
	IWebhookData,
	IWebhookDescription,
	IWebhookResponseData,
	WebhookSetupMethodNames,
	WorkflowActivateMode,
	WorkflowExecuteMode,
} from 'n8n-workflow';

import { CredentialStore } from './credentialsHelper';
import type { PreAuthenticationCall } from './credentialsHelper';
import { ensureN8nCore } from './n8nEnv';
import {
	CLINIC_TRIGGER_NODE_TYPE,
	N8N_WEBHOOK_BASE_URL,
	N8N_WEBHOOK_TEST_BASE_URL,
	TestNodeTypes,
	createAdditionalData,
} from './n8nRuntime';
import { applyCredentials, nodeCredentialsFrom } from './runNode';
import type { ClinicCredentialsInput } from './runNode';

/** The trigger node's webhook id (the UUID n8n gives the node when it is added). */
export const TRIGGER_WEBHOOK_ID = '4f9d5f5e-8f69-4d0a-9b8a-6c1e2a7b3c01';

export interface TriggerOptions {
	parameters: INodeParameters;
	/** Credential data by type; with `store`, as in runClinicNode (added or edited). */
	credentials?: ClinicCredentialsInput;
	store?: CredentialStore;
	/**
	 * The workflow's static data as n8n saved it last time (the whole object, with the
	 * `node:Clinic Trigger` key). Default: none saved yet.
	 */
	staticData?: IDataObject;
	/**
	 * The exact callback URL `getNodeWebhookUrl('default')` returns. When it looks like
	 * `<base>/<webhookId>/<path>` n8n computes it from those parts; otherwise it is forced.
	 * Default: n8n's own URL under https://n8n.example.test/webhook (or /webhook-test).
	 */
	webhookUrl?: string;
	/** 'trigger' (an active workflow, default) or 'manual' ("Listen for test event"). */
	mode?: 'trigger' | 'manual';
	/** The node's name; default 'Clinic Trigger'. */
	nodeName?: string;
	/** The node's webhook id; default TRIGGER_WEBHOOK_ID. */
	webhookId?: string;
	/** The node's version (default 1, as saved workflows from before version 1.1 hold it). */
	typeVersion?: number;
}

export interface HookResult {
	/** What the method returned (checkExists: whether the subscriptions exist). */
	result?: boolean;
	/** What it threw. */
	error?: Error;
	/** The static data n8n holds after the call (saved when changed): pass it to the next call. */
	staticData: IDataObject;
	/** Whether the node changed the static data (n8n saves the workflow only then). */
	staticDataChanged: boolean;
	/** This node's part of the static data (`getWorkflowStaticData('node')`). */
	nodeStaticData: IDataObject;
	store: CredentialStore;
	preAuthenticationCalls: PreAuthenticationCall[];
	/** The callback URL the node was given. */
	webhookUrl: string;
}

export interface DeliverWebhookOptions extends TriggerOptions {
	/** Request headers (names are lower-cased as Node's http does). */
	headers?: Record<string, string | string[]>;
	/** The body exactly as received. */
	rawBody?: Buffer;
	/** The parsed body; default JSON.parse(rawBody) when the content type is JSON and it parses. */
	body?: unknown;
	query?: Record<string, string | string[]>;
	/** Default 'POST'. */
	method?: IHttpRequestMethods;
	/**
	 * n8n storing the run the node started: how long it takes before n8n answers, and
	 * whether it fails (then n8n answers 500 and no run starts, as n8n 2.x does). Asked at
	 * the moment n8n would store it; `whileStoring` runs before n8n answers.
	 */
	storeRun?: { delayMs?: number; fails?: () => boolean; whileStoring?: () => Promise<void> };
}

export interface RecordedResponse {
	/** Whether the node wrote an answer itself. */
	sent: boolean;
	status: number;
	headers: Record<string, string>;
	body: unknown;
}

export interface DeliveryResult {
	/** The items the execution starts with, or undefined when no execution starts. */
	workflowData?: INodeExecutionData[][];
	noWebhookResponse?: boolean;
	webhookResponse?: unknown;
	/** The HTTP answer the sender got: the node's own, or n8n's default. */
	response: { status: number; body: unknown; headers: Record<string, string> };
	/** What the node itself wrote on the response object. */
	nodeResponse: RecordedResponse;
	/** What webhook() threw (n8n then records it and starts the workflow to fail). */
	error?: Error;
	staticData: IDataObject;
	staticDataChanged: boolean;
	nodeStaticData: IDataObject;
	store: CredentialStore;
	preAuthenticationCalls: PreAuthenticationCall[];
}

function webhookDescriptionOf(nodeType: INodeType, name = 'default'): IWebhookDescription {
	const description = nodeType.description.webhooks?.find((webhook) => webhook.name === name);
	if (!description) throw new Error(`The trigger has no "${name}" webhook`);
	return description;
}

interface Setup {
	workflow: Workflow;
	node: INode;
	nodeType: INodeType;
	webhookData: IWebhookData;
	additionalData: ReturnType<typeof createAdditionalData>;
	store: CredentialStore;
	forcedUrl?: string;
	webhookUrl: string;
	mode: WorkflowExecuteMode;
}

function setUp(options: TriggerOptions, httpMethod: IHttpRequestMethods = 'POST'): Setup {
	const store = options.store ?? new CredentialStore();
	applyCredentials(store, options.credentials);
	const mode: WorkflowExecuteMode = options.mode ?? 'trigger';
	const isTest = mode === 'manual';
	const nodeName = options.nodeName ?? 'Clinic Trigger';
	let webhookId = options.webhookId ?? TRIGGER_WEBHOOK_ID;

	const nodeTypes = new TestNodeTypes();
	const nodeType = nodeTypes.getByNameAndVersion(CLINIC_TRIGGER_NODE_TYPE, 1);
	const description = webhookDescriptionOf(nodeType);

	// Which base URL gives exactly the wanted callback URL through n8n's own computation?
	let baseUrl = (isTest ? N8N_WEBHOOK_TEST_BASE_URL : N8N_WEBHOOK_BASE_URL).replace(/\/$/, '');
	let forcedUrl: string | undefined;
	if (options.webhookUrl) {
		const path = typeof description.path === 'string' && !description.path.startsWith('=') ? description.path : '';
		const match = path ? new RegExp(`^(.*)/([^/]+)/${path.replace(/^\//, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`).exec(options.webhookUrl) : null;
		if (match) {
			baseUrl = match[1];
			webhookId = match[2];
		} else {
			forcedUrl = options.webhookUrl;
		}
	}

	const node: INode = {
		id: 'clinic-trigger-node',
		name: nodeName,
		type: CLINIC_TRIGGER_NODE_TYPE,
		typeVersion: options.typeVersion ?? 1,
		position: [0, 0],
		webhookId,
		parameters: options.parameters,
		credentials: nodeCredentialsFrom(store),
	};
	const workflow = new Workflow({
		id: 'clinic-trigger-workflow',
		name: 'Clinic trigger test',
		nodes: [node],
		connections: {},
		active: !isTest,
		nodeTypes,
		staticData: deepCopy(options.staticData ?? {}),
		settings: { executionOrder: 'v1' },
	});
	const additionalData = createAdditionalData({ store, mode });
	if (isTest) (additionalData as { webhookTestBaseUrl: string }).webhookTestBaseUrl = baseUrl;
	else (additionalData as { webhookBaseUrl: string }).webhookBaseUrl = baseUrl;

	const ranNode = workflow.getNode(nodeName) as INode;
	const path = workflow.expression.getSimpleParameterValue(ranNode, description.path, 'internal', {}) as string;
	const webhookData: IWebhookData = {
		httpMethod,
		node: nodeName,
		path: NodeHelpers.getNodeWebhookPath(workflow.id, ranNode, String(path).replace(/^\/|\/$/g, ''), false, false),
		webhookDescription: description,
		workflowId: workflow.id,
		workflowExecuteAdditionalData: additionalData,
		webhookId,
		isTest,
	};
	const webhookUrl =
		forcedUrl ?? NodeHelpers.getNodeWebhookUrl(baseUrl, workflow.id, ranNode, String(path), false);
	return { workflow, node: ranNode, nodeType, webhookData, additionalData, store, forcedUrl, webhookUrl, mode };
}

/** n8n's WorkflowStaticDataService.saveStaticData: saves only what changed, without the flag. */
function savedStaticData(workflow: Workflow, before: IDataObject): { staticData: IDataObject; changed: boolean } {
	const changed = workflow.staticData.__dataChanged === true;
	if (!changed) return { staticData: deepCopy(before), changed };
	const copy = JSON.parse(JSON.stringify(workflow.staticData)) as IDataObject;
	delete copy.__dataChanged;
	for (const value of Object.values(copy)) {
		if (value && typeof value === 'object') delete (value as IDataObject).__dataChanged;
	}
	return { staticData: copy, changed };
}

function nodePart(staticData: IDataObject, nodeName: string): IDataObject {
	return deepCopy((staticData[`node:${nodeName}`] as IDataObject | undefined) ?? {});
}

function forceWebhookUrl(context: { getNodeWebhookUrl: (name: 'default') => string | undefined }, url?: string) {
	if (url === undefined) return;
	const original = context.getNodeWebhookUrl.bind(context);
	context.getNodeWebhookUrl = (name) => (name === 'default' ? url : original(name));
}

/** Runs `webhookMethods.default[method]` as n8n does on activation ('create' after a false 'checkExists') or deactivation ('delete'). */
export async function runTriggerHook(method: WebhookSetupMethodNames, options: TriggerOptions): Promise<HookResult> {
	await ensureN8nCore();
	const setup = setUp(options);
	const { workflow, node, nodeType, webhookData, additionalData, store, mode } = setup;
	const activation: WorkflowActivateMode = mode === 'manual' ? 'manual' : 'activate';
	const webhookFn = nodeType.webhookMethods?.[webhookData.webhookDescription.name]?.[method];
	if (!webhookFn) throw new Error(`The trigger has no webhook method "${method}"`);

	const context = new HookContext(workflow, node, additionalData, mode, activation, webhookData);
	forceWebhookUrl(context as unknown as Parameters<typeof forceWebhookUrl>[0], setup.forcedUrl);

	let result: boolean | undefined;
	let error: Error | undefined;
	try {
		result = (await webhookFn.call(context)) as boolean;
	} catch (caught) {
		error = caught as Error;
	}
	const saved = savedStaticData(workflow, options.staticData ?? {});
	return {
		...(error ? { error } : { result }),
		staticData: saved.staticData,
		staticDataChanged: saved.changed,
		nodeStaticData: nodePart(saved.staticData, node.name),
		store,
		preAuthenticationCalls: additionalData.credentialsHelper.preAuthenticationCalls,
		webhookUrl: setup.webhookUrl,
	};
}

/** n8n activating the workflow: checkExists, then create when it answered false. */
export async function activateTrigger(options: TriggerOptions): Promise<HookResult & { created: boolean }> {
	const checked = await runTriggerHook('checkExists', options);
	if (checked.error || checked.result) return { ...checked, created: false };
	const created = await runTriggerHook('create', { ...options, store: checked.store, staticData: checked.staticData });
	return { ...created, created: true };
}

interface FakeResponse {
	recorded: RecordedResponse;
	res: Record<string, unknown>;
	/** n8n's answer went out: 'finish', then 'close', as a Node response emits them. */
	answered: (status: number) => void;
}

/** An express Response as far as nodes use it; records what is written. */
function fakeResponse(): FakeResponse {
	const recorded: RecordedResponse = { sent: false, status: 200, headers: {}, body: undefined };
	const events = new EventEmitter();
	const res: Record<string, unknown> = {
		headersSent: false,
		writableFinished: false,
		statusCode: 200,
		locals: {},
	};
	const finish = (body: unknown) => {
		recorded.sent = true;
		recorded.body = body;
		res.headersSent = true;
		return res;
	};
	Object.assign(res, {
		status(code: number) {
			recorded.status = code;
			res.statusCode = code;
			return res;
		},
		sendStatus(code: number) {
			recorded.status = code;
			res.statusCode = code;
			return finish(undefined);
		},
		setHeader(name: string, value: string) {
			recorded.headers[name.toLowerCase()] = String(value);
			return res;
		},
		set(name: string | Record<string, string>, value?: string) {
			if (typeof name === 'string') recorded.headers[name.toLowerCase()] = String(value);
			else for (const [key, item] of Object.entries(name)) recorded.headers[key.toLowerCase()] = String(item);
			return res;
		},
		header(name: string, value: string) {
			recorded.headers[name.toLowerCase()] = String(value);
			return res;
		},
		getHeader(name: string) {
			return recorded.headers[name.toLowerCase()];
		},
		type(value: string) {
			recorded.headers['content-type'] = value;
			return res;
		},
		writeHead(code: number, headers?: Record<string, string>) {
			recorded.status = code;
			res.statusCode = code;
			for (const [key, item] of Object.entries(headers ?? {})) recorded.headers[key.toLowerCase()] = String(item);
			return res;
		},
		json(body: unknown) {
			recorded.headers['content-type'] ??= 'application/json; charset=utf-8';
			return finish(body);
		},
		send(body: unknown) {
			return finish(body);
		},
		end(body?: unknown) {
			return finish(body);
		},
		on(event: string, listener: () => void) {
			events.on(event, listener);
			return res;
		},
		once(event: string, listener: () => void) {
			events.once(event, listener);
			return res;
		},
	});
	const answered = (status: number) => {
		res.statusCode = status;
		res.writableFinished = true;
		events.emit('finish');
		events.emit('close');
	};
	return { recorded, res, answered };
}

/** An incoming delivery handled by the trigger's webhook(), as n8n's webhook server runs it. */
export async function deliverWebhook(options: DeliverWebhookOptions): Promise<DeliveryResult> {
	await ensureN8nCore();
	const method = options.method ?? 'POST';
	const setup = setUp(options, method);
	const { workflow, node, nodeType, webhookData, additionalData, store, mode } = setup;
	if (!nodeType.webhook) throw new Error('The trigger has no webhook() method');

	const headers: Record<string, string | string[]> = {};
	for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
	const rawBody = options.rawBody ?? Buffer.alloc(0);
	let body = options.body;
	if (body === undefined) {
		body = {};
		const contentType = String(headers['content-type'] ?? '');
		if (rawBody.length && /json/i.test(contentType)) {
			try {
				body = JSON.parse(rawBody.toString('utf8'));
			} catch {
				body = {};
			}
		}
	}
	const query = options.query ?? {};
	const url = new URL(setup.webhookUrl);
	const req = {
		method,
		url: `${url.pathname}${Object.keys(query).length ? `?${new URLSearchParams(query as Record<string, string>).toString()}` : ''}`,
		originalUrl: url.pathname,
		path: url.pathname,
		headers,
		rawHeaders: Object.entries(headers).flatMap(([name, value]) => [name, String(value)]),
		query,
		params: {},
		body,
		rawBody,
		readRawBody: async () => {},
		ip: '127.0.0.1',
		ips: [],
		protocol: url.protocol.replace(':', ''),
		hostname: url.hostname,
		get: (name: string) => headers[name.toLowerCase()],
		header: (name: string) => headers[name.toLowerCase()],
		contentType: String(headers['content-type'] ?? '').split(';')[0].trim(),
		on: () => req,
		once: () => req,
	};
	const { recorded, res, answered } = fakeResponse();
	(additionalData as unknown as { httpRequest: unknown }).httpRequest = req;
	(additionalData as unknown as { httpResponse: unknown }).httpResponse = res;

	const context = new WebhookContext(workflow, node, additionalData, mode, webhookData, [], null);
	forceWebhookUrl(context as unknown as Parameters<typeof forceWebhookUrl>[0], setup.forcedUrl);

	let resultData: IWebhookResponseData | undefined;
	let error: Error | undefined;
	try {
		resultData = (await nodeType.webhook.call(context)) as IWebhookResponseData;
	} catch (caught) {
		error = caught as Error;
		resultData = { noWebhookResponse: true, workflowData: [[{ json: {} }]] };
	}
	const saved = savedStaticData(workflow, options.staticData ?? {});

	// n8n's answer when the node did not write one itself (responseMode 'onReceived').
	const description = webhookData.webhookDescription;
	const responseCode = Number(
		workflow.expression.getSimpleParameterValue(node, description.responseCode as string | undefined, mode, {}, undefined, 200),
	);
	let response: DeliveryResult['response'];
	if (recorded.sent || resultData.noWebhookResponse === true) {
		response = { status: recorded.status, body: recorded.body, headers: recorded.headers };
	} else if (resultData.workflowData === undefined) {
		response = {
			status: responseCode,
			body: resultData.webhookResponse !== undefined ? resultData.webhookResponse : { message: 'Webhook call received' },
			headers: recorded.headers,
		};
	} else {
		const responseData = workflow.expression.getSimpleParameterValue(
			node,
			description.responseData as string | undefined,
			mode,
			{},
			undefined,
			'firstEntryJson',
		);
		response = {
			status: responseCode,
			// n8n's order (extractWebhookOnReceivedResponse): responseData first.
			body:
				responseData === 'noData'
					? undefined
					: responseData
						? responseData
						: resultData.webhookResponse !== undefined
							? resultData.webhookResponse
							: { message: 'Workflow was started' },
			headers: recorded.headers,
		};
	}

	let workflowData = resultData.workflowData;
	if (workflowData && !recorded.sent && options.storeRun) {
		if (options.storeRun.delayMs) await new Promise((resolve) => setTimeout(resolve, options.storeRun!.delayMs));
		await options.storeRun.whileStoring?.();
		if (options.storeRun.fails?.()) {
			workflowData = undefined;
			response = { status: 500, body: { message: 'Error in workflow' }, headers: {} };
		}
	}
	answered(response.status);

	return {
		workflowData,
		noWebhookResponse: resultData.noWebhookResponse,
		webhookResponse: resultData.webhookResponse,
		response,
		nodeResponse: recorded,
		...(error ? { error } : {}),
		staticData: saved.staticData,
		staticDataChanged: saved.changed,
		nodeStaticData: nodePart(saved.staticData, node.name),
		store,
		preAuthenticationCalls: additionalData.credentialsHelper.preAuthenticationCalls,
	};
}

export interface WebhookReceiver {
	/** The callback URL to register: `http://127.0.0.1:PORT/webhook/<webhookId>/webhook`. */
	url: string;
	/** Every delivery handled so far, oldest first. */
	readonly deliveries: DeliveryResult[];
	/**
	 * The static data deliveries start from; each delivery's saved data becomes the next
	 * one's. Set it after activating with the receiver's URL (`receiver.staticData = created.staticData`).
	 */
	staticData: IDataObject;
	/** Resolves when `count` deliveries have been handled (rejects after `timeoutMs`). */
	waitFor(count: number, timeoutMs?: number): Promise<DeliveryResult[]>;
	close(): Promise<void>;
}

/**
 * A real HTTP endpoint in front of `deliverWebhook`: what n8n's webhook server does for
 * the trigger. Register `receiver.url` (via `runTriggerHook('create', {webhookUrl})`) and
 * the simulator's deliveries reach the node through n8n-core's WebhookContext; the
 * sender gets the node's (or n8n's default) answer. Static data is carried from one
 * delivery to the next; `options.staticData` is where it starts.
 */
export async function startWebhookReceiver(
	options: Omit<TriggerOptions, 'webhookUrl'> & { host?: string },
): Promise<WebhookReceiver> {
	const deliveries: DeliveryResult[] = [];
	let staticData: IDataObject = deepCopy(options.staticData ?? {});
	const waiters: Array<{ count: number; resolve: (value: DeliveryResult[]) => void }> = [];
	const webhookId = options.webhookId ?? TRIGGER_WEBHOOK_ID;
	let url = '';
	// One delivery at a time, in arrival order, as one n8n main process handles static data.
	let queue: Promise<unknown> = Promise.resolve();

	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			queue = queue.then(async () => {
				const requestUrl = new URL(req.url ?? '/', url);
				const query: Record<string, string> = {};
				for (const [key, value] of requestUrl.searchParams) query[key] = value;
				try {
					const delivery = await deliverWebhook({
						...options,
						webhookUrl: url,
						staticData,
						method: (req.method ?? 'POST') as IHttpRequestMethods,
						headers: req.headers as Record<string, string | string[]>,
						rawBody: Buffer.concat(chunks),
						query,
					});
					staticData = delivery.staticData;
					deliveries.push(delivery);
					const { status, body, headers } = delivery.response;
					const payload = body === undefined ? '' : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
					res.writeHead(status, {
						...headers,
						...(typeof body === 'object' && body !== null && !Buffer.isBuffer(body) ? { 'content-type': 'application/json' } : {}),
					});
					res.end(payload);
				} catch (error) {
					res.writeHead(500, { 'content-type': 'application/json' });
					res.end(JSON.stringify({ message: (error as Error).message }));
				}
				for (const waiter of [...waiters]) {
					if (deliveries.length >= waiter.count) {
						waiters.splice(waiters.indexOf(waiter), 1);
						waiter.resolve(deliveries.slice());
					}
				}
			});
		});
	});
	const host = options.host ?? '127.0.0.1';
	await new Promise<void>((resolve) => server.listen(0, host, resolve));
	const { port } = server.address() as AddressInfo;
	url = `http://${host}:${port}/webhook/${webhookId}/webhook`;

	return {
		url,
		deliveries,
		get staticData() {
			return staticData;
		},
		set staticData(value: IDataObject) {
			staticData = deepCopy(value);
		},
		async waitFor(count: number, timeoutMs = 5000) {
			if (deliveries.length >= count) return deliveries.slice();
			return await new Promise<DeliveryResult[]>((resolve, reject) => {
				const timer = setTimeout(
					() => reject(new Error(`Only ${deliveries.length} of ${count} deliveries arrived in ${timeoutMs} ms`)),
					timeoutMs,
				);
				waiters.push({
					count,
					resolve: (value) => {
						clearTimeout(timer);
						resolve(value);
					},
				});
			});
		},
		async close() {
			await new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			});
		},
	};
}
