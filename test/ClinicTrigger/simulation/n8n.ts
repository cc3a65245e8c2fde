/**
 * n8n as the triggers live in it, per version, in virtual time: processes that share one
 * database, each with its own memory (its own copy of the package's modules), killed and
 * started again at any step. What each step does is read in n8n's `packages/cli`:
 *
 * - A production webhook loads the workflow, and with it the static data, from the
 *   database for every request (`webhooks/live-webhooks.ts` `executeWebhook`:
 *   `workflowRepository.findOne`, then `new Workflow({ staticData })`).
 * - n8n saves static data as one whole object, only when it was marked changed
 *   (`workflow-static-data.service.ts` `saveStaticData`, `__dataChanged`): last writer wins.
 *   After a delivery the save is an awaited database write, fast or slow.
 * - A node that answered itself (no run): static data saved, if changed, as webhook() returns.
 * - A run, 2.x: the run is stored, then static data saved, then n8n answers
 *   (`webhook-helpers.ts`, `shouldDeferOnReceivedResponse`); a run n8n refuses is answered
 *   500 and nothing is saved. 1.x: static data saved and the answer sent first, the run
 *   stored after (`webhook-helpers.ts` `executeWebhook`, `responseMode: 'onReceived'`):
 *   a process killed in between loses the run.
 * - A poller (the Event Log Trigger, Gmail, RSS) in the same workflow holds the workflow
 *   object made at activation and, when its poll emits, saves that object's static data
 *   whole (`active-workflow-manager.ts`, `__emit` → `saveStaticData(workflow)`).
 * - Activation runs `checkExists`, then `create` when it says false; deactivation runs
 *   `delete`; n8n saves the static data after each (`active-workflow-manager.ts`
 *   `addWebhooks` / `clearWebhooks`). A 1.x save of an active workflow, and a 2.x republish,
 *   is a deactivation followed by an activation.
 */
import type { IDataObject, INode, INodeExecutionData, INodeType, IWebhookResponseData } from 'n8n-workflow';

import { WEBHOOK_BASE, credentialData, hookContext, observable, pollContext, SimResponse, webhookContext } from './contexts';
import type { NodeSetup, ProcessHandle } from './contexts';
import type { Random } from './random';
import { sleep } from './service';

export type Version = 1 | 2;

/** One n8n process's copy of the package: its own module-level memory. */
export interface PackageCopy {
	ClinicTrigger: new () => INodeType;
	ClinicEventLogTrigger: new () => INodeType;
	forgetProcessMemory: () => void;
}

/** A run n8n kept: which process (and which life of it) ran which events. */
export interface StoredRun {
	node: string;
	process: number;
	life: number;
	items: IDataObject[];
}

const never = new Promise<never>(() => undefined);
type Loaded = { staticData: IDataObject; changed: () => boolean; clearMark: () => void };
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value ?? {})) as T;

export class N8nProcess implements ProcessHandle {
	life = 0;
	up = true;
	readonly logger = { warnings: [] as string[] };
	/** Responses this life of the process still holds open. */
	readonly open = new Set<SimResponse>();
	readonly nodes: { trigger: INodeType; poller: INodeType };

	constructor(
		readonly index: number,
		readonly pkg: PackageCopy,
		readonly request: ProcessHandle['request'],
	) {
		this.nodes = { trigger: new pkg.ClinicTrigger(), poller: new pkg.ClinicEventLogTrigger() };
	}

	alive(): boolean {
		return this.up;
	}

	/** Killed (SIGKILL): its memory and everything under way are gone. */
	kill(): void {
		this.up = false;
		this.life++;
		// The process's code stops: what still waits on a response of it (the trigger's re-mark) ends with it.
		for (const response of this.open) response.die();
		this.open.clear();
		this.pkg.forgetProcessMemory();
	}

	/** Started again: a fresh memory. */
	start(): void {
		this.up = true;
	}

	/** A handle whose requests die with this life of the process. */
	handle(): ProcessHandle {
		const life = this.life;
		return { alive: () => this.up && this.life === life, request: this.request, logger: this.logger };
	}
}

export class N8nModel {
	readonly db = { staticData: {} as IDataObject, runs: [] as StoredRun[], active: false, staticDataSaves: 0, deactivations: 0 };

	/** n8n writes the workflow's static data, whole (a database write). */
	private saveStaticData(staticData: IDataObject): void {
		this.db.staticData = staticData;
		this.db.staticDataSaves++;
	}
	/** Events whose run n8n 1.x answered and then lost with a killed process (n8n's own loss). */
	readonly lostByN8n = new Set<number>();
	/** When a trigger's webhook() first handed each event to n8n in a run's items. */
	readonly handedOverAt = new Map<number, number>();
	private poller?: { staticData: IDataObject; changed: boolean };

	constructor(
		readonly version: Version,
		readonly processes: N8nProcess[],
		readonly random: Random,
		readonly trigger: INode,
		readonly pollerNode: INode | undefined,
		readonly settings: { refuseRuns: number; storeMs: () => number; saveMs: () => number },
	) {}

	/** The main: activation, deactivation and polls happen here. */
	get main(): N8nProcess {
		return this.processes[0];
	}

	private load(): Loaded {
		let changed = false;
		const staticData = observable(copy(this.db.staticData), () => (changed = true));
		return { staticData, changed: () => changed, clearMark: () => (changed = false) };
	}

	private setupOf(node: INode, staticData: IDataObject, mode: NodeSetup['mode']): NodeSetup {
		return { node, workflowId: 'wf-1', mode, staticData, credentials: credentialData };
	}

	/** Activation on the main: the trigger's hooks, then (with a poller) the workflow object the poller keeps. */
	async activate(): Promise<void> {
		const process = this.main;
		const handle = process.handle();
		const { staticData, changed } = this.load();
		const hooks = process.nodes.trigger.webhookMethods!.default!;
		const ctx = hookContext(handle, this.setupOf(this.trigger, staticData, 'trigger')) as never;
		// A failed activation is tried again, as n8n 2.x does by itself and a user of 1.x does by hand.
		for (let attempt = 1; ; attempt++) {
			try {
				if (!(await hooks.checkExists.call(ctx))) await hooks.create.call(ctx);
				break;
			} catch (error) {
				if (attempt >= 20) throw error;
				await sleep(1_000);
			}
		}
		if (!handle.alive()) return await never;
		if (changed()) this.saveStaticData(copy(staticData));
		this.db.active = true;
		if (this.pollerNode) this.poller = { staticData: observable(copy(this.db.staticData), () => this.poller && (this.poller.changed = true)), changed: false };
	}

	async deactivate(): Promise<void> {
		const process = this.main;
		const handle = process.handle();
		this.db.active = false;
		this.db.deactivations++;
		this.poller = undefined;
		const { staticData, changed } = this.load();
		await process.nodes.trigger.webhookMethods!.default!.delete.call(hookContext(handle, this.setupOf(this.trigger, staticData, 'trigger')) as never);
		if (!handle.alive()) return await never;
		if (changed()) this.saveStaticData(copy(staticData));
	}

	/** One poll of the poller in the same workflow, on the main; when it emits, n8n saves the copy it holds, whole. */
	async poll(): Promise<void> {
		const poller = this.poller;
		if (!poller || !this.pollerNode || !this.main.up) return;
		const handle = this.main.handle();
		const result = await this.main.nodes.poller.poll!.call(pollContext(handle, this.setupOf(this.pollerNode, poller.staticData, 'trigger')) as never).catch(() => null);
		if (!handle.alive() || this.poller !== poller) return;
		if (result) {
			this.db.runs.push({ node: this.pollerNode.name, process: 0, life: this.main.life, items: result[0].map((item) => item.json) });
			this.saveStaticData(copy(poller.staticData));
		}
	}

	/** A delivery to the trigger's address, at one process: the HTTP status n8n answers, or never (the process died). */
	/** `returned` is called as the trigger's webhook() returns (with whether it started a run): what n8n does after it (storing the run) is n8n's time, not the trigger's. */
	async deliver(process: N8nProcess, url: string, rawBody: Buffer, headers: Record<string, string>, hangUpAfterMs: number, returned: (startedRun: boolean) => void): Promise<number> {
		if (!process.up) return 0;
		if (!this.db.active || !url.startsWith(`${WEBHOOK_BASE}/${this.trigger.webhookId}/`)) return 404;
		const handle = process.handle();
		const loaded = this.load();
		const { staticData, changed } = loaded;
		const response = new SimResponse();
		process.open.add(response);
		response.once('finish', () => process.open.delete(response));
		// The service stops waiting and closes the connection: Node's response emits 'close' without 'finish'.
		setTimeout(() => response.hangUp(), hangUpAfterMs);
		const query = Object.fromEntries(new URL(url).searchParams);
		const ctx = webhookContext(handle, this.setupOf(this.trigger, staticData, 'webhook'), { rawBody, headers, query }, response);
		let result: IWebhookResponseData;
		try {
			result = await process.nodes.trigger.webhook!.call(ctx as never);
		} catch {
			returned(false);
			return handle.alive() ? 500 : await never;
		}
		const items = result.workflowData?.[0];
		returned(!!items);
		if (!handle.alive()) return await never;
		if (!items) {
			// The node answered already; n8n's write of what webhook() changed lands later.
			if (changed()) void this.writeStaticData(handle, staticData);
			return response.writableFinished ? response.statusCode : 200;
		}
		for (const item of items) if (!this.handedOverAt.has(Number(item.json.eventId))) this.handedOverAt.set(Number(item.json.eventId), Date.now());
		return await this.storeRun(process, handle, items, loaded, response);
	}

	/** n8n's write of a delivery's static data: the whole object as it is now, in the database a moment later (unless the process dies first). */
	private async writeStaticData(handle: ProcessHandle, staticData: IDataObject): Promise<void> {
		const written = copy(staticData);
		await sleep(this.settings.saveMs());
		if (handle.alive()) this.saveStaticData(written);
	}

	private async storeRun(process: N8nProcess, handle: ProcessHandle, items: INodeExecutionData[], { staticData, changed, clearMark }: Loaded, response: SimResponse): Promise<number> {
		const run: StoredRun = { node: this.trigger.name, process: process.index, life: process.life, items: items.map((item) => item.json) };
		if (this.version === 1) {
			if (changed()) await this.writeStaticData(handle, staticData);
			if (!handle.alive()) return await never;
			response.status(200).end();
			void sleep(this.settings.storeMs()).then(() => {
				if (handle.alive()) this.db.runs.push(run);
				else for (const item of run.items) this.lostByN8n.add(Number(item.eventId));
			});
			return 200;
		}
		// workflow-runner.ts `establishContextForPersistence`: a new Workflow over the same static data clears its changed mark.
		await sleep(0);
		clearMark();
		await sleep(this.settings.storeMs());
		if (!handle.alive()) return await never;
		if (this.random.chance(this.settings.refuseRuns)) {
			response.status(500).end();
			return 500;
		}
		this.db.runs.push(run);
		if (changed()) await this.writeStaticData(handle, staticData);
		if (!handle.alive()) return await never;
		response.status(200).end();
		return 200;
	}
}
