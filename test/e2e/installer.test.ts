/**
 * The package through n8n's own installer (Settings → Community Nodes, the same REST
 * endpoints the screen calls), from a private registry (verdaccio, no uplinks), on 1.123
 * and 2.41. n8n accepts a registry other than npmjs.org only with the license feature
 * `feat:communityNodes:customRegistry`, which its end-to-end mode (E2E_TESTS=true,
 * PATCH /rest/e2e/feature) switches on; N8N_COMMUNITY_PACKAGES_REGISTRY names the
 * registry for installs and updates, and a `.npmrc` in the nodes folder for the update
 * check (`npm outdated` ignores the variable).
 *
 * Versions: the previous release is the real one, built from its own commit
 * (test/e2e/fixtures/previousRelease.json, harness/release.ts): what users have
 * installed, with its own way of storing subscriptions (the secret itself in static
 * data) and its own duplicate check. This build is published as 0.1.1, and repacked as
 * 0.1.2 for an update between two builds that both have the Event Log Trigger (0.1.0 has
 * none).
 *
 * 1. Install the released 0.1.0; a Clinic Trigger workflow and a workflow with the Clinic
 *    node run active; 0.1.1 is published and n8n offers it; Update while events keep
 *    coming: every event starts its workflow exactly once (counted once the service's
 *    retries are over), one live subscription at the trigger's address (the release's),
 *    the workflows are not touched, the runs after the update are this build's, and the
 *    Clinic node still runs.
 * 2. Then the README's step after upgrading from 0.1.0 (deactivate, activate: the
 *    subscription is replaced, the old one deleted), a Clinic Event Log Trigger workflow
 *    joins, and 0.1.1 -> 0.1.2 while events keep coming, with the same checks for both
 *    triggers.
 * 3. Uninstall with the workflows still active: n8n calls no trigger's delete method, so
 *    the subscription stays at the service and its deliveries fail; the README's way out
 *    (install again, deactivate, uninstall) leaves nothing behind. Deactivating first
 *    (the README's advice) leaves nothing behind either.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startSimulator, type EventRecord, type Simulator } from '../simulator';
import {
	ALL_N8N_VERSIONS,
	isFinished,
	nodeJson,
	nodesFolder,
	packRelease,
	packRepository,
	previousRelease,
	repositoryPackage,
	restImportCredentials,
	restImportWorkflows,
	retagTarball,
	startLocalRegistry,
	startN8n,
	useN8nContext,
	waitFor,
	type Execution,
	type LocalRegistry,
	type N8nServer,
	type PublicWorkflow,
	type WorkflowImport,
} from './harness';
import { EVENT_LOG_TRIGGER, eventLogWorkflow } from './support/eventLog';
import { DEMO_CREDENTIAL_IDS, simulatorCredentials } from './support/examples';
import { settledRunsPerEvent } from './support/runs';
import { clinicTriggerWorkflow } from './support/workflows';

const PACKAGE = repositoryPackage().name;
const RELEASE = previousRelease();
const PREVIOUS = RELEASE.version;
const UPDATE = '0.1.1';
const NEXT = '0.1.2';
const TRIGGER = 'Patient Updated';
const TRIGGER_WEBHOOK_ID = '3e0c5a8e-9b1d-4f2a-8c6e-1d2f3a4b5c6d';
const ACTION_PATH = 'clinic-installer-action';
const CUSTOM_REGISTRY_FEATURE = 'feat:communityNodes:customRegistry';
const credential = { clinicApi: { id: DEMO_CREDENTIAL_IDS.clinicApi, name: 'Clinic API (simulator)' } };

interface InstalledPackage {
	packageName: string;
	installedVersion: string;
	updateAvailable?: string;
	failedLoading?: boolean;
	installedNodes: Array<{ type: string }>;
}

function patientUpdatedWorkflow(): WorkflowImport {
	return clinicTriggerWorkflow({ name: 'Patient updated (installer)', webhookId: TRIGGER_WEBHOOK_ID, nodeId: 'patient-updated', nodeName: TRIGGER, credential: credential.clinicApi, typeVersion: 1 }); // 0.1.0 knows only version 1
}

/** Webhook -> Clinic Consultation Get, with the plain id parameter 0.1.0 saved. */
function actionWorkflow(): WorkflowImport {
	return {
		name: 'Consultation on request (installer)',
		nodes: [
			{
				id: 'action-webhook',
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: '9d2e4f10-6a3b-4c5d-8e7f-0a1b2c3d4e5f',
				parameters: { httpMethod: 'POST', path: ACTION_PATH, responseMode: 'lastNode', options: {} },
			},
			{
				id: 'action-clinic',
				name: 'Clinic',
				type: 'n8n-nodes-clinic.clinic',
				typeVersion: 1,
				position: [220, 0],
				parameters: { authentication: 'clinicApi', resource: 'consultation', operation: 'get', consultationId: '={{ $json.body.id }}' },
				credentials: credential,
			},
		],
		connections: { Webhook: { main: [[{ node: 'Clinic', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

const finished = (executions: Execution[]) => executions.filter(isFinished);

/** How many executions started with each event id (trigger node `node`). */
function runsPerEvent(executions: Execution[], node: string): Map<number, number> {
	const counts = new Map<number, number>();
	for (const execution of executions) {
		for (const json of nodeJson(execution, node)) {
			const id = json.eventId as number;
			counts.set(id, (counts.get(id) ?? 0) + 1);
		}
	}
	return counts;
}

describe.each(ALL_N8N_VERSIONS)('n8n %s: install, update and uninstall through Community Nodes', (version) => {
	let workDir: string;
	let registry: LocalRegistry;
	let updateTarball: string;
	let nextTarball: string;
	let sim: Simulator;
	let server: N8nServer;
	let triggerId: string;
	let actionId: string;
	let eventLogId: string;

	beforeAll(async () => {
		workDir = mkdtempSync(join(tmpdir(), `n8n-e2e-registry-${version}-`));
		const built = packRepository(join(workDir, 'pack'));
		updateTarball = retagTarball(built, UPDATE, join(workDir, 'pack'));
		nextTarball = retagTarball(built, NEXT, join(workDir, 'pack'));
		registry = await startLocalRegistry(join(workDir, 'registry'));
		// The release as built from its commit (cached after the first run).
		registry.publish(packRelease(RELEASE));
	}, 5 * 60_000);

	const n8n = useN8nContext(
		() => ({
			version,
			label: 'installer',
			env: { E2E_TESTS: 'true', N8N_COMMUNITY_PACKAGES_REGISTRY: registry.url.replace(/\/$/, '') },
		}),
		async (ctx) => {
			// The service retries a failed delivery 3 times, a second apart.
			// A package update holds n8n up for seconds on a busy machine: the service waits 30 s for
			// an answer, so a late answer is not retried (after the update the trigger's memory of
			// what ran is new, and a retry of a try that did run would run again: docs/triggers.md).
			sim = await startSimulator({ allowHttpCallbacks: true, deliveryRetryDelayMs: 1000, deliveryTimeoutMs: 30_000 });
			mkdirSync(nodesFolder(ctx.userFolder), { recursive: true });
			writeFileSync(join(nodesFolder(ctx.userFolder), '.npmrc'), `registry=${registry.url}\n`, 'utf8');
			// Taken in before the package exists, as workflows a user brings along (their
			// credential follows once 0.1.0 is installed: n8n's REST API refuses a credential type
			// it does not know).
			server = n8n.track(await startN8n(ctx));
			[triggerId, actionId, eventLogId] = await restImportWorkflows(server, [patientUpdatedWorkflow(), actionWorkflow(), eventLogWorkflow()]);
			await server.setE2eFeature(CUSTOM_REGISTRY_FEATURE);
		},
	);

	afterAll(async () => {
		await sim?.close();
		await registry?.stop();
		if (workDir && !n8n.ctx.failed) rmSync(workDir, { recursive: true, force: true });
	});

	const packages = async () => await server.rest<InstalledPackage[]>('GET', '/community-packages');
	const live = () => sim.subscriptions().filter((s) => s.deleted_at === null && s.status === 'enabled');
	/** Every subscription ever made for the Clinic Trigger's address, deleted ones included. */
	const atTriggerAddress = () => sim.subscriptions().filter((s) => s.url.includes(`/${TRIGGER_WEBHOOK_ID}/`));
	const onDisk = (userFolder: string) =>
		(JSON.parse(readFileSync(join(nodesFolder(userFolder), 'node_modules', PACKAGE, 'package.json'), 'utf8')) as { version: string })
			.version;
	let patientSeq = 100;
	/** Patient id -> the service's event id (a run of 0.1.0 names only the patient). */
	const patientEvents = new Map<number, number>();
	const emitPatient = async () => {
		const id = (patientSeq += 1);
		const record = await sim.emit('patient', 'patient-updated', { id });
		patientEvents.set(id, record.id);
		return record;
	};
	const emitConsultation = async () =>
		await sim.emit('consultation', 'consultation-finished', { id: 500 + sim.events().length });
	const patientEventsOf = (execution: Execution) =>
		nodeJson(execution, TRIGGER)
			.map((json) => patientEvents.get((json.value as { id?: number } | undefined)?.id ?? -1))
			.filter((id): id is number => id !== undefined);

	/**
	 * The Clinic Trigger's runs per event once the service's retries are over: the caller
	 * compares exactly (a lost event shows as 0 runs, a doubled one as 2).
	 */
	const triggerRunsOnceSettled = async (eventIds: number[]) => {
		const perEvent = await settledRunsPerEvent(sim, server, triggerId, eventIds, patientEventsOf, { timeoutMs: 90_000 });
		return new Map([...perEvent].map(([id, runs]) => [id, runs.length]));
	};

	/**
	 * Waits until every event of `ids` started a finished execution of `workflowId` and
	 * none is running, then returns the runs per event id (for the Event Log Trigger, which
	 * reads the log every minute: there is no delivery to wait for).
	 */
	const runsOnceSettled = async (workflowId: string, node: string, ids: number[], timeoutMs: number) => {
		await sim.deliveriesSettled();
		let counts = new Map<number, number>();
		await waitFor(
			`executions of workflow ${workflowId} for ${ids.length} events`,
			async () => {
				const all = await server.listExecutions(workflowId);
				if (finished(all).length !== all.length) return undefined;
				counts = runsPerEvent(all, node);
				return ids.every((id) => counts.has(id)) ? true : undefined;
			},
			{ timeoutMs, intervalMs: 1000 },
		).catch(() => undefined); // the exact comparison below says what is missing
		return counts;
	};
	const expectOnce = (counts: Map<number, number>, ids: number[]) => {
		expect(Object.fromEntries(counts)).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
	};
	/**
	 * Each event ran, and once but for runs n8n started while it loaded the new version
	 * (`reload`: from the update's start to 5 s after its answer). Then the old and the new
	 * code take deliveries side by side, each with its own memory, like two webhook
	 * processors: a copy may run again there, with the same eventId (docs/triggers.md).
	 */
	const expectOnceButForTheReload = async (ids: number[], reload: { from: number; to: number }) => {
		const perEvent = await settledRunsPerEvent(sim, server, triggerId, ids, patientEventsOf, { timeoutMs: 90_000 });
		const during = (run: Execution) => Date.parse(run.startedAt) >= reload.from && Date.parse(run.startedAt) <= reload.to;
		const wrong = [...perEvent].filter(([, runs]) => runs.length === 0 || runs.filter((run) => !during(run)).length > 1 || (runs.length > 1 && runs.filter(during).length === 0));
		expect(wrong.map(([id, runs]) => [id, runs.map((run) => run.startedAt)])).toEqual([]);
		return [...perEvent].filter(([, runs]) => runs.length > 1).map(([id]) => id);
	};

	/** Runs the Clinic node through the action workflow's webhook: its answer is the consultation. */
	const runAction = async (consultationId: number) => {
		const response = await fetch(server.webhookUrl(ACTION_PATH), {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ id: consultationId }),
		});
		expect(response.status).toBe(200);
		return (await response.json()) as { id?: number };
	};

	/**
	 * Emits a patient event every 200 ms (and a consultation every second when asked) while
	 * `update` runs, and as long again after it; answers the update's result, what was
	 * emitted, and how long the update took.
	 */
	const updateWhileEmitting = async <T>(update: () => Promise<T>, options: { consultations: boolean }) => {
		let updating = true;
		const emitted: Array<Promise<void>> = [];
		const patients: EventRecord[] = [];
		const consultations: EventRecord[] = [];
		const failedTries: Array<number | null> = [];
		const note = (record: EventRecord) => {
			for (const log of record.logs) if (log.response_code === null || log.response_code >= 300) failedTries.push(log.response_code);
			return record;
		};
		const emitter = (async () => {
			for (let tick = 0; updating || tick % 5 !== 0; tick++) {
				emitted.push(emitPatient().then((e) => void patients.push(note(e))));
				if (options.consultations && tick % 5 === 0) emitted.push(emitConsultation().then((e) => void consultations.push(note(e))));
				await new Promise((resolve) => setTimeout(resolve, 200)); // the pace of the events
			}
		})();
		const started = Date.now();
		const result = await update();
		const updateMs = Date.now() - started;
		const reload = { from: started, to: started + updateMs + 5000 };
		// Keep emitting as long again after the update as it took.
		await new Promise((resolve) => setTimeout(resolve, Math.max(updateMs, 2000)));
		updating = false;
		await emitter;
		await Promise.all(emitted);
		return { result, updateMs, reload, patients, consultations, failedTries };
	};

	const expectUntouched = async (before: PublicWorkflow[]) => {
		for (const old of before) {
			const now = await server.getWorkflow(old.id);
			expect([now.id, now.active, now.versionId, now.updatedAt]).toEqual([old.id, true, old.versionId, old.updatedAt]);
		}
	};

	it(
		`installs the released ${PREVIOUS} (built from its commit), then updates it to this build while events keep coming: each event runs once, one live subscription, the workflows are not touched, the Clinic node runs`,
		n8n.run(async (ctx) => {
			const installed = await server.rest<InstalledPackage>('POST', '/community-packages', { name: `${PACKAGE}@${PREVIOUS}` });
			expect(installed).toMatchObject({ packageName: PACKAGE, installedVersion: PREVIOUS });
			// The release: no Event Log Trigger yet.
			expect(installed.installedNodes.map((n) => n.type).sort()).toEqual([`${PACKAGE}.clinic`, `${PACKAGE}.clinicTrigger`].sort());
			expect(onDisk(ctx.userFolder)).toBe(PREVIOUS);
			// The credential as 0.1.0 saves it (no webhook signing key); the workflows get its id.
			await restImportCredentials(server, simulatorCredentials(sim));

			await server.activateWorkflow(triggerId);
			await server.activateWorkflow(actionId);
			const subscribed = live();
			expect(subscribed.map((s) => s.event_name)).toEqual(['patient-updated']);
			const before = [await server.getWorkflow(triggerId), await server.getWorkflow(actionId)];
			expect((await runAction(1)).id).toBe(1);

			// Events flow on the release.
			const flowing = [];
			for (let i = 0; i < 3; i++) flowing.push((await emitPatient()).id);
			expectOnce(await triggerRunsOnceSettled(flowing), flowing);
			// The release's runs: its trigger names no event id (this build's does).
			const [releaseRun] = await server.listExecutions(triggerId);
			expect(nodeJson(releaseRun, TRIGGER)[0]).not.toHaveProperty('eventId');

			registry.publish(updateTarball);
			expect((await packages()).map((p) => [p.installedVersion, p.updateAvailable])).toEqual([[PREVIOUS, UPDATE]]);

			const { result: updated, updateMs, reload, patients, failedTries } = await updateWhileEmitting(
				async () => await server.rest<InstalledPackage>('PATCH', '/community-packages', { name: PACKAGE }),
				{ consultations: false },
			);
			expect(updated).toMatchObject({ packageName: PACKAGE, installedVersion: UPDATE });
			expect(onDisk(ctx.userFolder)).toBe(UPDATE);
			expect((await packages()).map((p) => [p.installedVersion, p.updateAvailable, p.failedLoading ?? false])).toEqual([
				[UPDATE, undefined, false],
			]);

			// Every event, after the service's retries: none lost, none run twice but while n8n reloaded the package.
			const all = [...flowing, ...patients.map((e) => e.id)];
			const again = await expectOnceButForTheReload(all, reload);
			const triggerRuns = await server.listExecutions(triggerId);
			expect(triggerRuns.filter((e) => e.status !== 'success').map((e) => e.id)).toEqual([]);
			// The last event ran on this build (its item names the event id).
			const lastPatient = patients.at(-1)!;
			const lastRun = triggerRuns.find((run) => patientEventsOf(run).includes(lastPatient.id))!;
			expect(nodeJson(lastRun, TRIGGER).map((json) => json.eventId)).toContain(lastPatient.id);

			// One live subscription at the trigger's address; any other one made for it is deleted.
			const mine = atTriggerAddress();
			expect(mine.filter((s) => s.deleted_at === null).map((s) => [s.event_name, s.status])).toEqual([['patient-updated', 'enabled']]);
			expect(live().map((s) => s.id)).toEqual(mine.filter((s) => s.deleted_at === null).map((s) => s.id));

			// The workflows as they were, and the Clinic node runs on this build.
			await expectUntouched(before);
			expect((await runAction(2)).id).toBe(2);
			const actionRuns = await server.listExecutions(actionId);
			expect(actionRuns.map((e) => e.status)).toEqual(['success', 'success']);
			process.stderr.write(
				`n8n ${version}: update ${PREVIOUS} (release) -> ${UPDATE} took ${updateMs} ms; ${all.length} patient events, ${again.length} run again while n8n reloaded; subscriptions at the trigger's address: ${mine.map((s) => `${s.id}${s.deleted_at ? ' (deleted)' : ''}`).join(', ')}; failed delivery tries (retried): ${failedTries.length ? failedTries.join(', ') : 'none'}\n`,
			);
		}),
		10 * 60_000,
	);

	it(
		`after the README's step for ${PREVIOUS} (deactivate, activate) and with an Event Log Trigger active, updates ${UPDATE} -> ${NEXT} while events keep coming: each event runs once, nothing is re-subscribed, the workflows are not touched`,
		n8n.run(async (ctx) => {
			// Continues from the test above: 0.1.1 installed, the release's subscription.
			const released = live();
			expect(released).toHaveLength(1);
			await server.deactivateWorkflow(triggerId);
			await server.activateWorkflow(triggerId);
			// Replaced: one live subscription, the release's deleted.
			const subscribed = live();
			expect(subscribed.map((s) => s.event_name)).toEqual(['patient-updated']);
			expect(subscribed[0].id).not.toBe(released[0].id);
			expect(atTriggerAddress().filter((s) => s.deleted_at === null).map((s) => s.id)).toEqual([subscribed[0].id]);
			await server.activateWorkflow(eventLogId);
			const before = [await server.getWorkflow(triggerId), await server.getWorkflow(eventLogId)];

			// Events flow.
			const patientIds: number[] = [];
			const consultationIds: number[] = [];
			for (let i = 0; i < 3; i++) patientIds.push((await emitPatient()).id);
			consultationIds.push((await emitConsultation()).id);
			expectOnce(await triggerRunsOnceSettled(patientIds), patientIds);

			registry.publish(nextTarball);
			expect((await packages()).map((p) => [p.installedVersion, p.updateAvailable])).toEqual([[UPDATE, NEXT]]);

			const { result: updated, updateMs, reload, patients, consultations, failedTries } = await updateWhileEmitting(
				async () => await server.rest<InstalledPackage>('PATCH', '/community-packages', { name: PACKAGE }),
				{ consultations: true },
			);
			patientIds.push(...patients.map((e) => e.id));
			consultationIds.push(...consultations.map((e) => e.id));
			expect(updated).toMatchObject({ packageName: PACKAGE, installedVersion: NEXT });
			expect(onDisk(ctx.userFolder)).toBe(NEXT);
			expect((await packages()).map((p) => [p.installedVersion, p.updateAvailable, p.failedLoading ?? false])).toEqual([
				[NEXT, undefined, false],
			]);

			// Every event, after the service's retries: none lost, none run twice but while n8n reloaded the package.
			const again = await expectOnceButForTheReload(patientIds, reload);
			// The event log is read every minute: wait for the next read after the last event.
			expectOnce(await runsOnceSettled(eventLogId, EVENT_LOG_TRIGGER, consultationIds, 150_000), consultationIds);
			const runs = [...(await server.listExecutions(triggerId)), ...(await server.listExecutions(eventLogId))];
			expect(runs.filter((e) => e.status !== 'success').map((e) => e.id)).toEqual([]);

			// The same subscription, no new one, and the workflows as they were.
			expect(live().map((s) => s.id)).toEqual(subscribed.map((s) => s.id));
			expect(atTriggerAddress().filter((s) => s.deleted_at === null).map((s) => s.id)).toEqual(subscribed.map((s) => s.id));
			await expectUntouched(before);
			process.stderr.write(
				`n8n ${version}: update ${UPDATE} -> ${NEXT} took ${updateMs} ms; ${patientIds.length} patient events (${again.length} run again while n8n reloaded) and ${consultationIds.length} consultation events, each run once; failed delivery tries (retried): ${failedTries.length ? failedTries.join(', ') : 'none'}\n`,
			);
		}),
		10 * 60_000,
	);

	it(
		'uninstall with the workflows active leaves the subscription at the service; install again, deactivate, uninstall removes it; deactivating first leaves nothing',
		n8n.run(async () => {
			// Continues from the tests above: 0.1.2 installed, the workflows active.
			const subscribed = live();
			expect(subscribed).toHaveLength(1);
			const before = (await server.listExecutions(triggerId)).length;
			const readsBefore = (await server.listExecutions(eventLogId)).length;

			await server.rest('DELETE', `/community-packages?name=${PACKAGE}`);
			expect(await packages()).toEqual([]);
			// n8n removed the code, not the triggers: no delete method ran.
			expect(live().map((s) => s.id)).toEqual(subscribed.map((s) => s.id));
			const workflow = await server.getWorkflow(triggerId);
			expect(workflow.active).toBe(true);
			// A delivery now fails every try (n8n cannot run the trigger): the service gives up on it.
			const lost = await emitPatient();
			const codes = lost.logs.map((log) => log.response_code);
			expect(codes).toHaveLength(4);
			expect(codes.every((code) => code === null || code >= 400)).toBe(true);
			expect((await server.listExecutions(triggerId)).filter((e) => e.status === 'success')).toHaveLength(before);
			expect(lost.logs[0].response).toContain(`Unrecognized node type: ${PACKAGE}.clinicTrigger`);
			// The Event Log Trigger's next read (every minute) fails: an error execution.
			const failedRead = await waitFor(
				'the Event Log Trigger to run after the uninstall',
				async () => {
					const runs = await server.listExecutions(eventLogId);
					return runs.length > readsBefore ? runs[0] : undefined;
				},
				{ timeoutMs: 90_000, intervalMs: 1000 },
			);
			expect([failedRead.mode, failedRead.status]).toEqual(['trigger', 'error']);

			// The README's way out: install again, deactivate, uninstall.
			await server.rest('POST', '/community-packages', { name: PACKAGE });
			// The trigger's webhook was never removed: deliveries run again, and the first one runs
			// the event the service gave up on meanwhile (it is in the log past the trigger's cursor).
			const back = await emitPatient();
			const afterReinstall = await runsOnceSettled(triggerId, TRIGGER, [lost.id, back.id], 60_000);
			expect([afterReinstall.get(lost.id), afterReinstall.get(back.id)]).toEqual([1, 1]);
			await server.deactivateWorkflow(triggerId);
			await server.deactivateWorkflow(eventLogId);
			expect(live()).toEqual([]);
			await server.rest('DELETE', `/community-packages?name=${PACKAGE}`);
			expect(await packages()).toEqual([]);

			// The README's advice: deactivate first, then uninstall.
			await server.rest('POST', '/community-packages', { name: PACKAGE });
			await server.activateWorkflow(triggerId);
			expect(live().map((s) => s.event_name)).toEqual(['patient-updated']);
			await server.deactivateWorkflow(triggerId);
			expect(live()).toEqual([]);
			await server.rest('DELETE', `/community-packages?name=${PACKAGE}`);
			expect(live()).toEqual([]);
			expect(await packages()).toEqual([]);
		}),
		10 * 60_000,
	);
});
