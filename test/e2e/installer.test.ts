/**
 * The package through n8n's own installer (Settings → Community Nodes, the same REST
 * endpoints the screen calls), from a private registry (verdaccio, no uplinks), on 1.123
 * and 2.41. n8n accepts a registry other than npmjs.org only with the license feature
 * `feat:communityNodes:customRegistry`, which its end-to-end mode (E2E_TESTS=true,
 * PATCH /rest/e2e/feature) switches on; N8N_COMMUNITY_PACKAGES_REGISTRY names the
 * registry for installs and updates, and a `.npmrc` in the nodes folder for the update
 * check (`npm outdated` ignores the variable).
 *
 * Versions: the previous release (0.1.0) is this build repacked as 0.1.0, the update
 * this build repacked as 0.1.1 (building the release commit's sources again would test
 * its build, not n8n's installer): what changes between the two is what n8n does.
 *
 * 1. Install 0.1.0; a Clinic Trigger and a Clinic Event Log Trigger workflow run active;
 *    0.1.1 is published and n8n offers it; Update while events keep coming: every event
 *    starts its workflow exactly once (counted once the service's retries are over),
 *    the subscription at the service is the same one, and the workflows are not touched.
 * 2. Uninstall with the workflows still active: n8n calls no trigger's delete method, so
 *    the subscription stays at the service and its deliveries fail; the README's way out
 *    (install again, deactivate, uninstall) leaves nothing behind. Deactivating first
 *    (the README's advice) leaves nothing behind either.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startSimulator, type Simulator } from '../simulator';
import {
	ALL_N8N_VERSIONS,
	importCredentials,
	importWorkflows,
	nodeJson,
	nodesFolder,
	packRepository,
	repositoryPackage,
	retagTarball,
	startLocalRegistry,
	startN8n,
	useN8nContext,
	waitFor,
	type Execution,
	type LocalRegistry,
	type N8nServer,
	type WorkflowImport,
} from './harness';
import { EVENT_LOG_TRIGGER, eventLogWorkflow } from './support/event-log';
import { DEMO_CREDENTIAL_IDS, simulatorCredentials } from './support/examples';

const PACKAGE = repositoryPackage().name;
const PREVIOUS = '0.1.0';
const UPDATE = '0.1.1';
const TRIGGER = 'Patient Updated';
const CUSTOM_REGISTRY_FEATURE = 'feat:communityNodes:customRegistry';

interface InstalledPackage {
	packageName: string;
	installedVersion: string;
	updateAvailable?: string;
	failedLoading?: boolean;
	installedNodes: Array<{ type: string }>;
}

function patientUpdatedWorkflow(): WorkflowImport {
	return {
		name: 'Patient updated (installer)',
		nodes: [
			{
				id: 'patient-updated',
				name: TRIGGER,
				type: 'n8n-nodes-clinic.clinicTrigger',
				typeVersion: 1,
				position: [0, 0],
				webhookId: '3e0c5a8e-9b1d-4f2a-8c6e-1d2f3a4b5c6d',
				parameters: { authentication: 'clinicApi', events: ['patient:patient-updated'], options: { allowInsecureUrl: true } },
				credentials: { clinicApi: { id: DEMO_CREDENTIAL_IDS.clinicApi, name: 'Clinic API (simulator)' } },
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}

const finished = (executions: Execution[]) => executions.filter((e) => !['running', 'new', 'waiting'].includes(e.status));

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
	let previousTarball: string;
	let updateTarball: string;
	let sim: Simulator;
	let server: N8nServer;
	let triggerId: string;
	let eventLogId: string;

	beforeAll(async () => {
		workDir = mkdtempSync(join(tmpdir(), `n8n-e2e-registry-${version}-`));
		const built = packRepository(join(workDir, 'pack'));
		previousTarball = retagTarball(built, PREVIOUS, join(workDir, 'pack'));
		updateTarball = retagTarball(built, UPDATE, join(workDir, 'pack'));
		registry = await startLocalRegistry(join(workDir, 'registry'));
		registry.publish(previousTarball);
	}, 5 * 60_000);

	const n8n = useN8nContext(
		() => ({
			version,
			label: 'installer',
			env: { E2E_TESTS: 'true', N8N_COMMUNITY_PACKAGES_REGISTRY: registry.url.replace(/\/$/, '') },
		}),
		async (ctx) => {
			// The service retries a failed delivery 3 times, a second apart.
			sim = await startSimulator({ allowHttpCallbacks: true, deliveryRetryDelayMs: 1000 });
			mkdirSync(nodesFolder(ctx.userFolder), { recursive: true });
			writeFileSync(join(nodesFolder(ctx.userFolder), '.npmrc'), `registry=${registry.url}\n`, 'utf8');
			// Imported before the package exists, as workflows a user brings along.
			await importCredentials(ctx, simulatorCredentials(sim));
			[triggerId, eventLogId] = await importWorkflows(ctx, [patientUpdatedWorkflow(), eventLogWorkflow()]);
			server = n8n.track(await startN8n(ctx));
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
	let patientSeq = 100;
	const emitPatient = async () => await sim.emit('patient', 'patient-updated', { id: (patientSeq += 1) });
	const emitConsultation = async () =>
		await sim.emit('consultation', 'consultation-finished', { id: 500 + sim.events().length });

	/**
	 * Waits until every event of `ids` started a finished execution of `workflowId` and
	 * none is running, then returns the runs per event id (the caller compares exactly: a
	 * lost event shows as missing, a doubled one as 2).
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

	it(
		'installs the previous release, then updates it while events keep coming: each event runs once, nothing is re-subscribed, the workflows are not touched',
		n8n.run(async (ctx) => {
			const installed = await server.rest<InstalledPackage>('POST', '/community-packages', { name: `${PACKAGE}@${PREVIOUS}` });
			expect(installed).toMatchObject({ packageName: PACKAGE, installedVersion: PREVIOUS });
			expect(installed.installedNodes.map((n) => n.type).sort()).toEqual(
				[`${PACKAGE}.clinic`, `${PACKAGE}.clinicEventLogTrigger`, `${PACKAGE}.clinicTrigger`].sort(),
			);
			const onDisk = () =>
				(JSON.parse(readFileSync(join(nodesFolder(ctx.userFolder), 'node_modules', PACKAGE, 'package.json'), 'utf8')) as { version: string }).version;
			expect(onDisk()).toBe(PREVIOUS);
			expect((await packages()).map((p) => [p.packageName, p.installedVersion, p.updateAvailable])).toEqual([
				[PACKAGE, PREVIOUS, undefined],
			]);

			await server.activateWorkflow(triggerId);
			await server.activateWorkflow(eventLogId);
			const subscribed = live();
			expect(subscribed.map((s) => s.event_name)).toEqual(['patient-updated']);
			const before = { trigger: await server.getWorkflow(triggerId), eventLog: await server.getWorkflow(eventLogId) };

			// Events flow on the previous release.
			const patientIds: number[] = [];
			const consultationIds: number[] = [];
			for (let i = 0; i < 3; i++) patientIds.push((await emitPatient()).id);
			consultationIds.push((await emitConsultation()).id);
			expectOnce(await runsOnceSettled(triggerId, TRIGGER, patientIds, 60_000), patientIds);

			// The release: n8n's update check (npm outdated, through the .npmrc) sees it.
			registry.publish(updateTarball);
			expect((await packages()).map((p) => [p.installedVersion, p.updateAvailable])).toEqual([[PREVIOUS, UPDATE]]);

			// Update while a patient event comes every 200 ms and a consultation every second.
			let updating = true;
			const emitted: Array<Promise<void>> = [];
			const failedTries: Array<number | null> = [];
			const note = (record: Awaited<ReturnType<typeof emitPatient>>) => {
				for (const log of record.logs) if (log.response_code === null || log.response_code >= 300) failedTries.push(log.response_code);
				return record;
			};
			const emitter = (async () => {
				for (let tick = 0; updating || tick % 5 !== 0; tick++) {
					emitted.push(emitPatient().then((e) => void patientIds.push(note(e).id)));
					if (tick % 5 === 0) emitted.push(emitConsultation().then((e) => void consultationIds.push(note(e).id)));
					await new Promise((resolve) => setTimeout(resolve, 200)); // the pace of the events
				}
			})();
			const started = Date.now();
			const updated = await server.rest<InstalledPackage>('PATCH', '/community-packages', { name: PACKAGE });
			const updateMs = Date.now() - started;
			// Keep emitting as long again after the update as it took.
			await new Promise((resolve) => setTimeout(resolve, Math.max(updateMs, 2000)));
			updating = false;
			await emitter;
			await Promise.all(emitted);
			expect(updated).toMatchObject({ packageName: PACKAGE, installedVersion: UPDATE });
			expect(onDisk()).toBe(UPDATE);
			expect((await packages()).map((p) => [p.installedVersion, p.updateAvailable, p.failedLoading ?? false])).toEqual([
				[UPDATE, undefined, false],
			]);

			// Every event once, after the service's retries: none lost, none doubled.
			expectOnce(await runsOnceSettled(triggerId, TRIGGER, patientIds, 90_000), patientIds);
			// The event log is read every minute: wait for the next read after the last event.
			expectOnce(await runsOnceSettled(eventLogId, EVENT_LOG_TRIGGER, consultationIds, 150_000), consultationIds);
			const runs = [...(await server.listExecutions(triggerId)), ...(await server.listExecutions(eventLogId))];
			expect(runs.filter((e) => e.status !== 'success').map((e) => e.id)).toEqual([]);

			// The same subscription, no new one, and the workflows as they were.
			expect(sim.subscriptions().map((s) => s.id)).toEqual(subscribed.map((s) => s.id));
			expect(live().map((s) => s.id)).toEqual(subscribed.map((s) => s.id));
			for (const [id, old] of [
				[triggerId, before.trigger],
				[eventLogId, before.eventLog],
			] as const) {
				const now = await server.getWorkflow(id);
				expect([now.active, now.versionId, now.updatedAt]).toEqual([true, old.versionId, old.updatedAt]);
			}
			process.stderr.write(
				`n8n ${version}: update ${PREVIOUS} -> ${UPDATE} took ${updateMs} ms; ${patientIds.length} patient and ${consultationIds.length} consultation events, each run once; failed delivery tries (retried): ${failedTries.length ? failedTries.join(', ') : 'none'}\n`,
			);
		}),
		10 * 60_000,
	);

	it(
		'uninstall with the workflows active leaves the subscription at the service; install again, deactivate, uninstall removes it; deactivating first leaves nothing',
		n8n.run(async () => {
			// Continues from the test above: 0.1.1 installed, both workflows active.
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
			// A delivery now fails every try (n8n cannot run the trigger): the event is lost.
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
			// The trigger's webhook was never removed: deliveries run again.
			const back = await emitPatient();
			const afterReinstall = await runsOnceSettled(triggerId, TRIGGER, [back.id], 60_000);
			expect([afterReinstall.get(back.id), afterReinstall.get(lost.id)]).toEqual([1, undefined]);
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
