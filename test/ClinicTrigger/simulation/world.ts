/**
 * One simulated world: the service model, n8n's model with its processes, the package's
 * real trigger code in each process, and a script of what happens when (events, kills,
 * saves, polls), all in jest's virtual time. `runWorld` plays it, lets it go quiet (the
 * service re-sends a delivery now and then, as live traffic does) until it has settled
 * and stayed so for three minutes, and answers what the invariants found.
 */
import type { INode } from 'n8n-workflow';

import { TOPIC_PREFIX } from './contexts';
import { N8nModel, N8nProcess } from './n8n';
import type { PackageCopy, Version } from './n8n';
import { Random } from './random';
import { ClinicService } from './service';
import type { DeliveryTry, ServiceShape } from './service';

export const OUR_TOPIC = `${TOPIC_PREFIX}.patient`;
export const OUR_NAME = 'patient-created';
const EVENT_KEY = `patient:${OUR_NAME}`;

/** Each n8n process's copy of the package, loaded once per test file (jest.isolateModules: a registry each). */
export function packageCopies(count: number): PackageCopy[] {
	return Array.from({ length: count }, () => {
		let pkg: PackageCopy | undefined;
		jest.isolateModules(() => {
			pkg = {
				ClinicTrigger: (require('../../../nodes/ClinicTrigger/ClinicTrigger.node') as { ClinicTrigger: PackageCopy['ClinicTrigger'] }).ClinicTrigger,
				ClinicEventLogTrigger: (require('../../../nodes/ClinicEventLogTrigger/ClinicEventLogTrigger.node') as { ClinicEventLogTrigger: PackageCopy['ClinicEventLogTrigger'] }).ClinicEventLogTrigger,
				forgetProcessMemory: (require('../../../credentials/ClinicProcessMemory') as { forgetProcessMemory: () => void }).forgetProcessMemory,
			};
		});
		return pkg as PackageCopy;
	});
}

export interface WorldSetup {
	version: Version;
	/** n8n processes serving deliveries (the first is the main); more than one is queue mode's webhook processors. */
	processes: number;
	shape: ServiceShape;
	/** An Event Log Trigger in the same workflow, polling every so often. */
	pollEveryMs?: number;
	refuseRuns: number;
	storeMs: [number, number];
	/** How long n8n's database write of a delivery's static data takes. */
	saveMs: [number, number];
	/** How long the script runs before the quiet part. */
	durationMs: number;
	/** How long the world goes on quietly at most, a delivery re-sent every 20 s, before the verdict (less once it settled). */
	quietMs: number;
}

export interface World {
	random: Random;
	service: ClinicService;
	n8n: N8nModel;
	/** Runs `action` at `atMs` of virtual time from the start; its failure is recorded. */
	at: (atMs: number, action: () => unknown) => void;
	/** An event of the trigger's kind (logged `commitAfterMs` after its id is taken). */
	emitOurs: (commitAfterMs?: number) => number;
	/** Events of other kinds (a bulk import): ids taken, nothing delivered to the trigger. */
	emitOthers: (count: number) => void;
	/** Kills a process, and starts it again `downMs` later. */
	kill: (process: number, downMs: number) => void;
}

export interface Verdict {
	violations: string[];
	ours: number[];
	runs: number;
	/** How many events each of the Clinic Trigger's runs held. */
	runSizes: number[];
	warnings: string[];
	/** The service's `GET /events` load: requests, the most at once, and delivery tries. */
	logReads: ClinicService['logReads'];
	deliveryTries: number;
	/** How many tries the trigger answered 503 (the log not read in time, or failing): the service tries them again. */
	answered503: number;
	/** How often n8n wrote the workflow's static data. */
	staticDataSaves: number;
}

const trigger: INode = {
	id: 'trigger-node',
	name: 'Clinic Trigger',
	type: 'n8n-nodes-clinic.clinicTrigger',
	typeVersion: 1.1,
	position: [0, 0],
	webhookId: '5a1c0d2e-0000-4000-8000-00000000a001',
	credentials: { clinicRefreshTokenApi: { id: 'cred-1', name: 'Clinic' } },
	parameters: { authentication: 'clinicRefreshTokenApi', events: [EVENT_KEY], options: {} },
};

const poller: INode = {
	id: 'poller-node',
	name: 'Clinic Event Log Trigger',
	type: 'n8n-nodes-clinic.clinicEventLogTrigger',
	typeVersion: 1,
	position: [0, 200],
	credentials: { clinicRefreshTokenApi: { id: 'cred-1', name: 'Clinic' } },
	parameters: { authentication: 'clinicRefreshTokenApi', events: [EVENT_KEY], startFrom: 'now', options: {} },
};

export async function runWorld(seed: number, setup: WorldSetup, copies: PackageCopy[], script: (world: World) => void): Promise<Verdict> {
	jest.clearAllTimers();
	for (const pkg of copies) pkg.forgetProcessMemory();
	const random = new Random(seed);
	const violations: string[] = [];
	const inFlight = new Map<number, Set<DeliveryTry>>();
	const processes = copies.slice(0, setup.processes).map((pkg, index) => new N8nProcess(index, pkg, async (method, path, body) => await service.request(method, path, body)));
	const n8n = new N8nModel(setup.version, processes, random, trigger, setup.pollEveryMs ? poller : undefined, {
		refuseRuns: setup.refuseRuns,
		storeMs: () => random.int(setup.storeMs[0], setup.storeMs[1]),
		saveMs: () => random.int(setup.saveMs[0], setup.saveMs[1]),
	});
	const service: ClinicService = new ClinicService(setup.shape, random, async (url, rawBody, headers, tried) => {
		const process = processes[random.int(0, processes.length - 1)];
		const pending = inFlight.get(process.index) ?? new Set();
		inFlight.set(process.index, pending);
		pending.add(tried);
		try {
			return await n8n.deliver(process, url, rawBody, headers, setup.shape.waitMs, (startedRun) => {
				tried.returnedAt ??= Date.now();
				tried.startedRun = startedRun;
			});
		} finally {
			pending.delete(tried);
		}
	});
	const started = Date.now();
	const ours: number[] = [];
	const world: World = {
		random,
		service,
		n8n,
		at: (atMs, action) => {
			setTimeout(() => {
				void Promise.resolve()
					.then(action)
					.catch((error: Error) => violations.push(`at ${atMs} ms: ${error.message}`));
			}, atMs);
		},
		emitOurs: (commitAfterMs = 0) => {
			const id = service.emit(OUR_TOPIC, OUR_NAME, commitAfterMs);
			ours.push(id);
			return id;
		},
		emitOthers: (count) => {
			for (let i = 0; i < count; i++) service.emit(`${TOPIC_PREFIX}.consultation`, 'consultation-created');
		},
		kill: (index, downMs) => {
			const process = processes[index];
			if (!process.up) return;
			for (const tried of inFlight.get(index) ?? []) tried.cutOff = true;
			process.kill();
			setTimeout(() => process.start(), downMs);
		},
	};
	await activate(n8n);
	script(world);
	if (setup.pollEveryMs) {
		for (let t = setup.pollEveryMs; t < setup.durationMs + setup.quietMs; t += setup.pollEveryMs) world.at(t, async () => await n8n.poll());
	}
	for (let t = setup.durationMs; t < setup.durationMs + setup.quietMs; t += 20_000) world.at(t, () => service.resend());
	await playUntilSettled(setup, () => service.uncommitted === 0 && everyEventRan(n8n, ours));
	const verdict = judge(n8n, service, ours, started);
	const warnings = processes.flatMap((p) => p.logger.warnings);
	// A run holds at most 100 events, 200 when a read that went on or a refused run hands its events over.
	if (verdict.runSizes.some((size) => size > 200)) violations.push(`a run of ${Math.max(...verdict.runSizes)} events`);
	// Alone in its workflow and its n8n, and the workflow never saved: nothing else saves the trigger's static data.
	if (setup.processes === 1 && !setup.pollEveryMs && n8n.db.deactivations === 0 && warnings.some((warning) => warning.includes('saved an older copy'))) violations.push('warned of an older copy of the static data with no other node or process to save one');
	return { ...verdict, violations: [...violations, ...verdict.violations], warnings };
}

/** Live traffic after the settled moment: resends and polls that would run an event again, were the record of what ran wrong. */
const SETTLED_FOR_MS = 3 * 60_000;

/**
 * Plays the script, then the quiet part until the world has settled (no commit still to come, every event of the
 * trigger's kind ran or was lost by n8n) and stayed so for SETTLED_FOR_MS; at most the whole quiet part and two minutes.
 */
async function playUntilSettled(setup: WorldSetup, settled: () => boolean): Promise<void> {
	const end = Date.now() + setup.durationMs + setup.quietMs + 120_000;
	await jest.advanceTimersByTimeAsync(setup.durationMs);
	let settledSince: number | undefined;
	while (Date.now() < end && (settledSince === undefined || Date.now() - settledSince < SETTLED_FOR_MS)) {
		await jest.advanceTimersByTimeAsync(Math.min(10_000, end - Date.now()));
		settledSince = settled() ? (settledSince ?? Date.now()) : undefined;
	}
}

/** Whether each of `ours` ran, or was lost by n8n (all of them are committed). */
function everyEventRan(n8n: N8nModel, ours: number[]): boolean {
	const ran = runsByEvent(n8n);
	return ours.every((id) => ran.has(id) || n8n.lostByN8n.has(id));
}

/** The Clinic Trigger's runs of each event id, named by process and life. */
function runsByEvent(n8n: N8nModel): Map<number, string[]> {
	const runsOf = new Map<number, string[]>();
	for (const run of n8n.db.runs.filter((run) => run.node === 'Clinic Trigger')) {
		for (const item of run.items) runsOf.set(Number(item.eventId), [...(runsOf.get(Number(item.eventId)) ?? []), `${run.process}.${run.life}`]);
	}
	return runsOf;
}

/** Activation before the script starts, in virtual time as long as it takes (a slow log, tries again). */
async function activate(n8n: N8nModel): Promise<void> {
	let done = false;
	const activation = n8n.activate().finally(() => (done = true));
	while (!done) await jest.advanceTimersByTimeAsync(1_000);
	await activation;
}

/** The invariants, after the world went quiet. */
function judge(n8n: N8nModel, service: ClinicService, ours: number[], started: number): Verdict {
	const violations: string[] = [];
	const triggerRuns = n8n.db.runs.filter((run) => run.node === 'Clinic Trigger');
	for (const item of triggerRuns.flatMap((run) => run.items)) {
		if (typeof item.eventId !== 'number') violations.push(`an item without an eventId: ${JSON.stringify(item).slice(0, 120)}`);
	}
	const runsOf = runsByEvent(n8n);
	const logged = new Set(service.events.map((event) => event.id));
	for (const id of ours) {
		if (!logged.has(id)) continue;
		const ran = runsOf.get(id) ?? [];
		if (ran.length === 0 && !n8n.lostByN8n.has(id)) violations.push(`event ${id} never ran`);
		const lives = new Set(ran);
		if (lives.size < ran.length) violations.push(`event ${id} ran ${ran.length} times (${ran.join(', ')}) in one life of one process`);
	}
	// Late: no answer within the wait, from a process that lived, whose trigger had not returned by then (a slow store is n8n's).
	// A try sent less than the wait before the verdict is not late yet.
	// A delivery answered as nothing new leaves its event to a run that holds it already: a later delivery may never come.
	// (One that starts a run may run only what a slow log showed by its deadline: the next delivery runs the rest.)
	const oursSet = new Set(ours);
	for (const tried of service.tries) {
		if (tried.startedRun || tried.answeredAt === undefined || tried.status === undefined || tried.status < 200 || tried.status >= 300 || !oursSet.has(tried.eventId)) continue;
		const handedOver = n8n.handedOverAt.get(tried.eventId);
		if (handedOver === undefined || handedOver > tried.answeredAt) violations.push(`event ${tried.eventId}'s delivery was answered ${tried.status} at ${tried.answeredAt - started} ms, as nothing new, and no run held it by then`);
	}
	const late = service.tries.filter(
		(tried) => tried.answeredAt === undefined && !tried.cutOff && tried.sentAt + service.shape.waitMs <= Date.now() && !(tried.returnedAt !== undefined && tried.returnedAt - tried.sentAt <= service.shape.waitMs),
	);
	if (late.length > 0) violations.push(`${late.length} delivery tries got no answer within the service's ${service.shape.waitMs / 1000} s wait (first at ${late[0].sentAt - started} ms, event ${late[0].eventId})`);
	return { violations, ours, runs: triggerRuns.length, runSizes: triggerRuns.map((run) => run.items.length), warnings: [], logReads: { ...service.logReads }, deliveryTries: service.tries.length, answered503: service.tries.filter((tried) => tried.status === 503).length, staticDataSaves: n8n.db.staticDataSaves };
}
