/**
 * The parts of n8n's node contexts the Clinic Trigger and the Event Log Trigger call, for
 * the simulation's n8n model: parameters, static data, the request and response, the
 * credential, n8n's logger, and the request helpers, which reach the service model
 * (and never answer once the process that asked is gone).
 */
import { EventEmitter } from 'node:events';

import type { IDataObject, INode } from 'n8n-workflow';

import { refreshSessionFingerprint } from '../../../credentials/ClinicAuth';
import type { Answer } from './service';

export const WEBHOOK_BASE = 'https://n8n.example.test/webhook';
export const SERVICE_BASE = 'https://webhooks.clinic.test';
export const TOPIC_PREFIX = 'clinic-7';

/** The integration credential, signed in already (a token that does not expire), with its webhook signing key. */
export function credentialData(): IDataObject {
	const data: IDataObject = { baseUrl: 'https://api.clinic.test/api/v1', webhookBaseUrl: SERVICE_BASE, topicPrefix: TOPIC_PREFIX, refreshToken: 'r-1', webhookSigningKey: 'k'.repeat(43) };
	return { ...data, accessToken: 'a-1', expiresAt: '2999-01-01T00:00:00.000Z', sessionFingerprint: refreshSessionFingerprint(data as never) };
}

/**
 * Static data as n8n's ObservableObject keeps it: any write, at any depth, marks the
 * workflow's data changed (n8n-workflow `observable-object.ts`); n8n saves it only then.
 */
export function observable(target: IDataObject, mark: () => void, proxies = new WeakMap<object, IDataObject>()): IDataObject {
	const kept = proxies.get(target);
	if (kept) return kept;
	const proxy = new Proxy(target, {
		get(object, key) {
			const value = Reflect.get(object, key) as unknown;
			return value && typeof value === 'object' && typeof key === 'string' ? observable(value as IDataObject, mark, proxies) : value;
		},
		set(object, key, value) {
			mark();
			return Reflect.set(object, key, value);
		},
		deleteProperty(object, key) {
			mark();
			return Reflect.deleteProperty(object, key);
		},
	});
	proxies.set(target, proxy);
	return proxy;
}

/** What one n8n process is to the helpers: requests from a generation that is gone never answer. */
export interface ProcessHandle {
	alive: () => boolean;
	request: (method: string, path: string, body: IDataObject | undefined) => Promise<Answer>;
	logger: { warnings: string[] };
}

const never = new Promise<never>(() => undefined);

function helpersOf(process: ProcessHandle) {
	const send = async (options: { method?: string; url?: string; uri?: string; body?: unknown }) => {
		if (!process.alive()) return await never;
		const url = new URL(String(options.url ?? options.uri));
		const answer = await process.request(String(options.method ?? 'GET'), url.pathname, options.body as IDataObject | undefined);
		if (!process.alive()) return await never;
		return answer;
	};
	return {
		httpRequest: send,
		httpRequestWithAuthentication: async (_type: string, options: { method?: string; url?: string; body?: unknown }) => await send(options),
		requestWithAuthentication: async (_type: string, options: { method?: string; uri?: string; body?: unknown }) => await send(options),
		returnJsonArray: (items: IDataObject[]) => items.map((json) => ({ json })),
	};
}

function loggerOf(process: ProcessHandle) {
	const warn = (message: string) => process.logger.warnings.push(message);
	return { warn, error: warn, info: () => undefined, debug: () => undefined };
}

export interface NodeSetup {
	node: INode;
	workflowId: string;
	mode: 'trigger' | 'webhook' | 'manual';
	/** The workflow's static data as this execution loaded it (observable). */
	staticData: IDataObject;
	credentials: () => IDataObject;
}

function baseContext(process: ProcessHandle, setup: NodeSetup) {
	const nodeKey = `node:${setup.node.name}`;
	return {
		getNode: () => setup.node,
		getNodeParameter: (name: string, fallback?: unknown) => (setup.node.parameters as IDataObject)[name] ?? fallback,
		getWorkflow: () => ({ id: setup.workflowId, name: 'Simulated', active: true }),
		getMode: () => setup.mode,
		getActivationMode: () => 'activate',
		getWorkflowStaticData: (type: string) => {
			if (type !== 'node') throw new Error('The triggers only use node static data');
			setup.staticData[nodeKey] ??= {};
			return setup.staticData[nodeKey] as IDataObject;
		},
		getCredentials: async () => {
			if (!process.alive()) return await never;
			return setup.credentials();
		},
		getNodeWebhookUrl: () => `${WEBHOOK_BASE}/${setup.node.webhookId}/webhook`,
		getTimezone: () => 'UTC',
		logger: loggerOf(process),
		helpers: helpersOf(process),
	};
}

export function hookContext(process: ProcessHandle, setup: NodeSetup) {
	return baseContext(process, setup);
}

export function pollContext(process: ProcessHandle, setup: NodeSetup) {
	return baseContext(process, setup);
}

/** An express-like response: what the node writes on it, and n8n's answer when it did not. */
export class SimResponse extends EventEmitter {
	statusCode = 200;
	body: unknown;
	writableFinished = false;
	headersSent = false;
	closed = false;

	status(code: number): this {
		this.statusCode = code;
		return this;
	}

	set(): this {
		return this;
	}

	setHeader(): this {
		return this;
	}

	json(body: unknown): this {
		return this.end(body);
	}

	send(body: unknown): this {
		return this.end(body);
	}

	hangUp(): void {
		if (this.writableFinished || this.closed) return;
		this.closed = true;
		this.emit('close');
	}

	/** Its process was killed: no answer ever goes out, and nothing of that process waits on it any more. */
	die(): void {
		this.statusCode = 0;
		this.writableFinished = true;
		this.closed = true;
	}

	end(body?: unknown): this {
		if (this.writableFinished) return this;
		this.body = body;
		this.headersSent = true;
		this.writableFinished = true;
		this.emit('finish');
		if (!this.closed) this.emit('close');
		this.closed = true;
		return this;
	}
}

export function webhookContext(process: ProcessHandle, setup: NodeSetup, request: { rawBody: Buffer; headers: Record<string, string>; query: Record<string, string> }, response: SimResponse) {
	return {
		...baseContext(process, setup),
		getRequestObject: () => ({ rawBody: request.rawBody, body: JSON.parse(request.rawBody.toString('utf8')) as unknown, headers: request.headers, query: request.query }),
		getResponseObject: () => response,
		getHeaderData: () => request.headers,
		getQueryData: () => request.query,
		getBodyData: () => JSON.parse(request.rawBody.toString('utf8')) as unknown,
	};
}
