/**
 * Shared by the credential tests and the request-path tests in test/shared: credential data
 * for the simulator, small local servers (HTML page, always-401 API, closed port),
 * request-log queries, the leak watch and a node run recorded in it.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { SecretCollector, findLeaks, forgetProcessMemory, runClinicNode } from '../helpers';
import type { CredentialStore, RunClinicNodeResult } from '../helpers';
import { passwordCredentialData, startSimulator } from '../simulator';
import type { RequestLogEntry, Simulator } from '../simulator';

export function passwordCredential(sim: Simulator, overrides: ICredentialDataDecryptedObject = {}): ICredentialDataDecryptedObject {
	return passwordCredentialData(sim, overrides);
}

export function refreshCredential(sim: Simulator, refreshToken: string): ICredentialDataDecryptedObject {
	return {
		baseUrl: sim.apiBaseUrl,
		webhookBaseUrl: sim.webhooksBaseUrl,
		topicPrefix: sim.topicPrefix,
		refreshToken,
	};
}

export const getConsultation = (id = '1') => ({
	resource: 'consultation',
	operation: 'get',
	consultationId: id,
});

/** Log entries that are not token requests. */
export function apiCalls(sim: Simulator): RequestLogEntry[] {
	return sim.log.filter((entry) => !entry.path.endsWith('/oauth/token'));
}

export function tokenCalls(sim: Simulator): RequestLogEntry[] {
	return sim.log.filter((entry) => entry.path.endsWith('/oauth/token'));
}

/** A raw call to the simulator's token endpoint (to check what it accepts afterwards). */
export async function refreshDirectly(sim: Simulator, refreshToken: string): Promise<number> {
	const response = await fetch(`${sim.apiBaseUrl}/oauth/token`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: refreshToken }),
	});
	await response.arrayBuffer();
	return response.status;
}

export interface LocalServer {
	url: string;
	requests: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders; body: string }>;
	close(): Promise<void>;
}

/** A tiny HTTP server answering every request with `respond`. */
export async function localServer(
	respond: (req: http.IncomingMessage, body: string) => { status: number; headers?: Record<string, string>; body: string },
	/** Milliseconds to wait before answering this request (the answer is computed after the wait). */
	delay: (req: http.IncomingMessage) => number = () => 0,
): Promise<LocalServer> {
	const requests: LocalServer['requests'] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const body = Buffer.concat(chunks).toString('utf8');
			requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
			const answer = () => {
				const reply = respond(req, body);
				res.writeHead(reply.status, reply.headers ?? {});
				res.end(reply.body);
			};
			const wait = delay(req);
			if (wait > 0) setTimeout(answer, wait);
			else answer();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		requests,
		close: () =>
			new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}

/** A web page for every request, as a marketing site or a login page would answer. */
export async function htmlServer(status = 200): Promise<LocalServer> {
	return await localServer(() => ({
		status,
		headers: { 'content-type': 'text/html; charset=utf-8' },
		body: '<!DOCTYPE html><html><head><title>Clinic</title></head><body><h1>Welcome</h1></body></html>',
	}));
}

/** A port nothing listens on (bound, then released). */
export async function closedPortUrl(): Promise<string> {
	const server = http.createServer();
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return `http://127.0.0.1:${port}`;
}

/**
 * The leak check of issue 3. Every result a test produced is recorded; every secret any
 * test saw (passwords, every access and refresh token n8n saved) is collected; `check`
 * asserts none appears in any recorded output, error message, description or serialised
 * error, across the whole file.
 */
export class LeakWatch {
	private readonly secrets = new SecretCollector();
	private readonly visible: unknown[] = [];

	secret(...values: Array<string | undefined>): this {
		this.secrets.add(...values);
		return this;
	}

	/** Records a result (output, error, test message) and the secrets of its store. */
	record(result: { output?: unknown; error?: unknown; message?: string; store?: CredentialStore }): void {
		if (result.store) this.secrets.addFromStore(result.store);
		if (result.output !== undefined) this.visible.push(result.output);
		if (result.error !== undefined) this.visible.push(result.error);
		if (result.message !== undefined) this.visible.push(result.message);
	}

	leaks(): Array<{ secret: string; where: string }> {
		return findLeaks(this.secrets.list(), ...this.visible);
	}

	get secretCount(): number {
		return this.secrets.list().length;
	}

	get recordedCount(): number {
		return this.visible.length;
	}
}

/** `runClinicNode`, each result recorded in `watch` for the file's leak check. */
export function recordedRun(watch: LeakWatch): (options: Parameters<typeof runClinicNode>[0]) => Promise<RunClinicNodeResult> {
	return async (options) => {
		const result = await runClinicNode(options);
		watch.record(result);
		return result;
	};
}

/**
 * The simulator a credential or request-path test file shares: started before the file (its
 * demo passwords and `extraSecrets` go to the file's leak watch), reset before each test with
 * a day-long token lifetime and n8n's process memory forgotten, closed after the file. `use`
 * receives it; `run` is a node run recorded in `watch`. Its tests get 30 s each.
 */
export function useSimulator(
	use: (sim: Simulator) => void,
	...extraSecrets: string[]
): { watch: LeakWatch; run: ReturnType<typeof recordedRun> } {
	jest.setTimeout(30_000);
	const watch = new LeakWatch();
	let sim: Simulator | undefined;
	beforeAll(async () => {
		sim = await startSimulator();
		watch.secret(sim.demo.password, sim.twoFactor.password, ...extraSecrets);
		use(sim);
	});
	afterAll(async () => {
		await sim?.close();
	});
	beforeEach(() => {
		sim!.reset();
		sim!.setTokenLifetime(86400);
		forgetProcessMemory();
	});
	return { watch, run: recordedRun(watch) };
}
