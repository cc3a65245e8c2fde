/**
 * The package in n8n 2.41's editor, in Chromium, as a new user meets it: sign in, install
 * the package through Settings → Community Nodes (from a private registry, as the installer
 * test does) and add its node without a restart, walk every resource and operation, pick a
 * record from a resource locator list, run a step against the simulator, open every
 * trigger's panel. Screenshots go to screenshots/ (eight of them, small, to docs/screenshots/
 * for the README with UPDATE_DOC_SCREENSHOTS=1).
 *
 * n8n starts without the package: the install test puts it there through the screen; a
 * test run alone (-t) gets it through the REST endpoint the screen calls.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { INodeProperties, INodeType, INodeTypeDescription } from 'n8n-workflow';
import type { Page } from 'playwright-core';

import { startSimulator, type Simulator } from '../simulator';
import { serviceCall } from '../ClinicTrigger/support';
import {
	DEFAULT_OWNER,
	N8N_VERSIONS,
	REPO_ROOT,
	importedCredentialId,
	nodesFolder,
	packRepository,
	repositoryPackage,
	restImportCredentials,
	restImportWorkflows,
	startLocalRegistry,
	startN8n,
	useN8nContext,
	type LocalRegistry,
	type N8nServer,
} from './harness';
import {
	closePanel,
	credentialChosen,
	creatorItems,
	launchChromium,
	pickFromNodesPanel,
	screenshotDir,
	selectOption,
	settled,
	shownProperties,
	signIn,
	type Browser,
} from './support/browser';
import { CAPTION_HIDDEN } from './support/captions';
import { closeCredentialDialog, publishInEditor, testCredentialInDialog } from './support/editorActions';
import { loadExample, simulatorCredentials } from './support/examples';
import { screencast, type Screencast } from './support/screencast';

const FLAGSHIP = 'consultation-finished-sign-email-pdf.json';
const E2E_MARKER_HIDDEN = '[data-test-id="e2e-test-mode-marker"] { display: none !important; }';
const PACKAGE = repositoryPackage().name;
/** n8n installs from a registry other than npmjs.org only with this license feature (its end-to-end mode grants it). */
const CUSTOM_REGISTRY_FEATURE = 'feat:communityNodes:customRegistry';
/** A credential whose password the service refuses, for the sign-in error a user sees. */
const WRONG_PASSWORD = { id: 'clinicWrongPass1', name: 'Clinic API (wrong password)' };

/**
 * Console errors the editor logs that are not the package's, each with why it is not. Any
 * other console error, or an error thrown in the page, fails the test.
 */
const ALLOWED_CONSOLE_ERRORS: Array<{ pattern: RegExp; reason: string }> = [
	{
		pattern: /^Failed to load resource: the server responded with a status of 401 \(Unauthorized\) \[http:\/\/127\.0\.0\.1:\d+\/rest\/login\]$/,
		reason: 'On its first load the editor asks n8n who is signed in; before the sign-in n8n answers 401.',
	},
	{
		pattern:
			/^Failed to load resource: (net::ERR_[A-Z_]+|the server responded with a status of 404 \(Not Found\)) \[https:\/\/registry\.npmjs\.org\/n8n-nodes-clinic\]$/,
		reason:
			"The editor looks up a community node's package on the public npm registry while its node is on screen (n8n's code, not the package's). The test machine has no network (its proxy's certificate is refused); before a release the registry answers 404.",
	},
	{
		pattern: /^Failed to load resource: net::ERR_[A-Z_]+ \[https:\/\/api\.npms\.io\/v2\/search\?q=keywords:n8n-community-node-package\]$/,
		reason:
			"n8n's Community Nodes screen counts the community packages published anywhere on api.npms.io (n8n's code); the test machine has no network.",
	},
	{
		pattern: /^ResponseError: Can't connect to n8n\.\n(\s+at .*\n)*\s+at .*\/assets\/SettingsCommunityNodesView-[\w-]+\.js:[\s\S]*$/,
		reason:
			"The same count's failed request, as n8n's request helper words any failed fetch, left uncaught by the Community Nodes screen (n8n's code); not a request to n8n itself.",
	},
];

const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { n8n: { nodes: string[] } };

/** Every node the package declares (dist/nodes/X/X.node.js), described from its source. */
const packageNodes: INodeTypeDescription[] = manifest.n8n.nodes.map((file) => {
	const source = join(REPO_ROOT, file.replace(/^dist\//, '').replace(/\.js$/, ''));
	const exports = require(source) as Record<string, new () => INodeType>;
	return new (Object.values(exports)[0])().description as INodeTypeDescription;
});
const clinic = packageNodes.find((node) => node.name === 'clinic')!;
const triggers = packageNodes.filter((node) => node.group.includes('trigger'));

const optionsOf = (property: INodeProperties | undefined) =>
	(property?.options ?? []) as Array<{ name: string; value: string; action?: string }>;
const resources = optionsOf(clinic.properties.find((property) => property.name === 'resource'));
const operationsOf = (resource: string) =>
	optionsOf(clinic.properties.find((p) => p.name === 'operation' && p.displayOptions?.show?.resource?.includes(resource)));

/**
 * An operation with a resource locator that can list records, if the node has one: the
 * webhook subscription or waiting room lists first (the simulator holds records for both).
 */
const listLocator = (() => {
	const preferred = ['webhookSubscription', 'waitingRoom'];
	const rank = (property: INodeProperties) => {
		const index = preferred.indexOf(String(property.displayOptions?.show?.resource?.[0]));
		return index < 0 ? preferred.length : index;
	};
	for (const property of [...clinic.properties].sort((a, b) => rank(a) - rank(b))) {
		const modes = (property.modes ?? []) as Array<{ name: string; type: string; displayName: string }>;
		const list = property.type === 'resourceLocator' ? modes.find((mode) => mode.type === 'list') : undefined;
		const show = property.displayOptions?.show;
		if (list && show?.resource && show.operation) {
			return { property, mode: list, resource: String(show.resource[0]), operation: String(show.operation[0]) };
		}
	}
	return undefined;
})();

/**
 * Labels the panel shows for these parameter values. Notices have none; Authentication n8n may
 * fold into the credential selector ("Credential" listing every type), its choice, not ours.
 */
const expectedLabels = (description: INodeTypeDescription, values: Record<string, unknown>) =>
	shownProperties(description, values)
		.filter((property) => property.type !== 'notice' && property.name !== 'authentication')
		.filter((property) => property.displayName && !/[<>]/.test(property.displayName))
		.map((property) => property.displayName);

describe('the package in n8n 2.41 editor, in Chromium', () => {
	let sim: Simulator;
	let server: N8nServer;
	let browser: Browser;
	let page: Page;
	/**
	 * The demo video, with captions: the install, then the credential's test, one operation,
	 * the flagship example published and run by a finished consultation.
	 */
	let video: Screencast;
	const shots = screenshotDir(REPO_ROOT);
	/** Every console error and page error, and failed requests to the package's methods. */
	const consoleErrors: string[] = [];
	const failedRequests: string[] = [];
	const started = Date.now();

	let workDir: string;
	let registry: LocalRegistry;

	beforeAll(async () => {
		// The registry a user's n8n installs from: this build, published to a private verdaccio.
		workDir = mkdtempSync(join(tmpdir(), 'n8n-e2e-browser-registry-'));
		registry = await startLocalRegistry(join(workDir, 'registry'));
		registry.publish(packRepository(join(workDir, 'pack')));
	}, 5 * 60_000);

	const n8n = useN8nContext(
		() => ({
			version: N8N_VERSIONS.v2,
			label: 'browser',
			env: { E2E_TESTS: 'true', N8N_DISABLE_UI: 'false', N8N_COMMUNITY_PACKAGES_REGISTRY: registry.url.replace(/\/$/, '') },
		}),
		async (ctx) => {
			sim = await startSimulator({ allowHttpCallbacks: true });
			// n8n's update check (npm outdated) ignores that variable: it reads the nodes folder's .npmrc.
			mkdirSync(nodesFolder(ctx.userFolder), { recursive: true });
			writeFileSync(join(nodesFolder(ctx.userFolder), '.npmrc'), `registry=${registry.url}\n`, 'utf8');
			server = n8n.track(await startN8n(ctx));
			await server.setE2eFeature(CUSTOM_REGISTRY_FEATURE);
			browser = await launchChromium(server.baseUrl);
			page = browser.page;
			video = await screencast(page, join(screenshotDir(REPO_ROOT), 'video-frames'));
			// The video, like the screenshots, leaves out the end-to-end mode's page marker.
			await page.addInitScript({
				content: `document.addEventListener('DOMContentLoaded', () => { const style = document.createElement('style'); style.textContent = ${JSON.stringify(E2E_MARKER_HIDDEN)}; document.head.appendChild(style); });`,
			});
			page.on('console', (message) => {
				if (message.type() !== 'error') return;
				// "Failed to load resource" names no address in its text: its location does.
				const at = message.location().url;
				consoleErrors.push(at ? `${message.text()} [${at}]` : message.text());
			});
			page.on('pageerror', (error) => consoleErrors.push(`${error.name}: ${error.message}`));
			page.on('response', (response) => {
				// Option lists, list searches and credential tests the package's methods answer.
				// and the package's output schemas (/schemas/n8n-nodes-clinic.clinic/<version>/<resource>/<operation>.json).
				if (/\/rest\/(dynamic-node-parameters|credentials\/test)|\/schemas\/n8n-nodes-clinic\./.test(response.url()) && response.status() >= 400) {
					failedRequests.push(`${response.status()} ${response.url()}`);
				}
			});
		},
	);

	afterAll(async () => {
		await browser?.close();
		await sim?.close();
		await registry?.stop();
		if (workDir && !n8n.ctx.failed) rmSync(workDir, { recursive: true, force: true });
		writeFileSync(join(shots, 'console-errors.log'), consoleErrors.join('\n'));
		console.log(`browser test: ${Math.round((Date.now() - started) / 1000)} s, screenshots in ${shots}`);
	});

	/** n8n's end-to-end mode frames every page with a marker; the pictures leave it out (and the video's captions). */
	const style = `${E2E_MARKER_HIDDEN}\n${CAPTION_HIDDEN}`;
	const shoot = async (name: string, target: 'page' | 'panel' = 'panel') => {
		const file = join(shots, `${name}.png`);
		// Once the canvas or panel has settled: no animation still running (the canvas fades in), endless ones aside.
		await page
			.waitForFunction("document.getAnimations().every((a) => a.playState !== 'running' || a.effect?.getTiming().iterations === Infinity)", undefined, { timeout: 10_000 })
			.catch(() => undefined);
		if (target === 'panel') await page.getByTestId('ndv').screenshot({ path: file, style });
		else await page.screenshot({ path: file, style });
		return file;
	};
	const documented: Record<string, string> = {};

	let signedIn = false;
	const signInOnce = async () => {
		if (signedIn) return;
		await signIn(page, DEFAULT_OWNER.email, DEFAULT_OWNER.password);
		signedIn = true;
	};
	const installedPackages = async () =>
		await server.rest<Array<{ packageName: string; installedVersion: string }>>('GET', '/community-packages');
	/**
	 * Each test starts from what it needs: signed in, the package installed (through the
	 * endpoint the install screen calls, when the install test did not run first), and
	 * (below) a Clinic step open.
	 */
	const ensureSignedIn = async () => {
		await signInOnce();
		if (!(await installedPackages()).some((installed) => installed.packageName === PACKAGE)) {
			await server.rest('POST', '/community-packages', { name: PACKAGE });
		}
	};
	/** A new workflow with a Manual Trigger and the Clinic node's "get many waiting rooms", its panel open. */
	const openClinicStep = async () => {
		await ensureSignedIn();
		await page.goto('/workflow/new');
		await pickFromNodesPanel(page, 'manual', 'Manual Trigger');
		if (await page.getByTestId('ndv').isVisible()) await closePanel(page);
		await pickFromNodesPanel(page, 'Clinic', 'Clinic');
		const getMany = operationsOf('waitingRoom').find((operation) => operation.value === 'getAll')!;
		await creatorItems(page).filter({ has: page.getByText(getMany.action!, { exact: true }) }).click();
		await page.getByTestId('ndv').waitFor();
	};

	const expectPanelShows = async (labels: string[]) => {
		const parameters = page.getByTestId('node-parameters');
		await parameters.waitFor();
		// Parameters that depend on others render a moment later: look again for up to 10 s.
		let missing = labels;
		for (const deadline = Date.now() + 10_000; ; await page.waitForTimeout(250)) {
			const text = await parameters.innerText();
			missing = labels.filter((label) => !text.includes(label));
			if (missing.length === 0 || Date.now() > deadline) break;
		}
		expect(missing).toEqual([]);
	};

	it(
		'signs in as the owner',
		n8n.run(async () => {
			await signIn(page, DEFAULT_OWNER.email, DEFAULT_OWNER.password);
			signedIn = true;
			expect(page.url()).toMatch(/\/(home|workflow)/);
		}),
		2 * 60_000,
	);

	it(
		'installs the package through Settings → Community Nodes and adds its node without a restart',
		n8n.run(async () => {
			await signInOnce();
			expect(await installedPackages()).toEqual([]);
			await page.goto('/settings/community-nodes');
			// With no package yet the screen's one button says "Install a community node".
			const installFirst = page.getByRole('button', { name: 'Install a community node' });
			await installFirst.waitFor();
			await video.record();
			await video.caption('1/5  Install the package: Settings → Community Nodes → n8n-nodes-clinic');
			await page.waitForTimeout(1000);
			await installFirst.click();
			const name = page.getByTestId('package-name-input');
			await name.or(name.locator('input')).last().fill(PACKAGE);
			const install = page.getByTestId('install-community-package-button');
			// Install stays disabled until the risk is acknowledged.
			await expect(install.isDisabled()).resolves.toBe(true);
			await page.getByTestId('user-agreement-checkbox').click();
			await expect(install.isEnabled()).resolves.toBe(true);
			await install.click();
			await video.caption('1/5  n8n installs n8n-nodes-clinic from the registry');
			const card = page.getByTestId('community-package-card').filter({ hasText: PACKAGE });
			await card.waitFor({ timeout: 120_000 });
			await expect(card.innerText()).resolves.toContain(repositoryPackage().version);
			await settled(card);
			documented.installed = await shoot('community-nodes-installed', 'page');
			expect((await installedPackages()).map((installed) => installed.packageName)).toEqual([PACKAGE]);
			// The credentials, now that n8n knows their type (its REST API refuses one it does not).
			// The wrong-password one first: n8n gives a new node the most recently saved one.
			await restImportCredentials(server, [
				{ ...WRONG_PASSWORD, type: 'clinicApi', data: { ...simulatorCredentials(sim)[0].data, password: 'not-the-password' } },
				...simulatorCredentials(sim),
			]);

			await video.caption('1/5  Installed: n8n-nodes-clinic is listed under Community Nodes');
			await page.waitForTimeout(1500);
			video.hold(3);

			// Its nodes are there at once, n8n not restarted: the nodes panel adds the Clinic node.
			await video.caption('1/5  No restart needed: the Clinic node is in the nodes panel');
			await openClinicStep();
			const getMany = operationsOf('waitingRoom').find((operation) => operation.value === 'getAll')!;
			await expect(page.getByTestId('node-title-container').innerText()).resolves.toContain(getMany.action!);
			await settled(page.getByTestId('ndv'));
			video.hold(2);
			await video.pause();
			await closePanel(page);
		}),
		3 * 60_000,
	);

	it(
		'adds the Clinic node from the nodes panel and runs a step against the service',
		n8n.run(async () => {
			await ensureSignedIn();
			await page.goto('/workflow/new');
			await pickFromNodesPanel(page, 'manual', 'Manual Trigger');
			if (await page.getByTestId('ndv').isVisible()) await closePanel(page);

			await pickFromNodesPanel(page, 'Clinic', 'Clinic');
			// The actions list: one entry per operation, under its resource. The panel fills in
			// its list as it renders (slowly on a busy machine): read it once every entry is there.
			const expectedActions = resources.flatMap((resource) => operationsOf(resource.value).map((operation) => operation.action!));
			for (const action of expectedActions) {
				await creatorItems(page).filter({ has: page.getByText(action, { exact: true }) }).first().waitFor({ state: 'attached' });
			}
			const actions = (await creatorItems(page).allInnerTexts()).map((text) => text.trim());
			for (const resource of resources) {
				for (const operation of operationsOf(resource.value)) expect(actions).toContain(operation.action);
			}
			await settled(page.getByTestId('node-creator'));
			// Above the actions n8n shows the trigger's description (it merges the two into one app).
			await expect(page.getByTestId('node-creator').innerText()).resolves.toContain(
				triggers.find((trigger) => trigger.name === 'clinicTrigger')!.description,
			);
			documented.actions = await shoot('clinic-actions', 'page');

			const waitingRooms = resources.find((resource) => resource.value === 'waitingRoom')!;
			const getMany = operationsOf('waitingRoom').find((operation) => operation.value === 'getAll')!;
			expect(waitingRooms).toBeDefined();
			await creatorItems(page).filter({ has: page.getByText(getMany.action!, { exact: true }) }).click();
			await page.getByTestId('ndv').waitFor();
			await credentialChosen(page, simulatorCredentials(sim)[0].name);
			await page.getByTestId('node-execute-button').click();
			const output = page.getByTestId('output-panel');
			await output.getByText(`${sim.data.waitingRooms.length} items`).waitFor();
			await output.getByRole('radio', { name: 'Table' }).click();
			const shown = await output.getByTestId('ndv-data-container').innerText();
			for (const room of sim.data.waitingRooms) expect(shown).toContain(String(room.name));
			documented.executed = await shoot('clinic-step-executed');
		}),
		3 * 60_000,
	);

	it(
		'shows the fields of every resource and operation',
		n8n.run(async () => {
			await openClinicStep();
			let walked = 0;
			for (const resource of resources) {
				await selectOption(page, 'resource', resource.name);
				for (const operation of operationsOf(resource.value)) {
					await selectOption(page, 'operation', operation.name);
					await expectPanelShows(expectedLabels(clinic, { resource: resource.value, operation: operation.value }));
					await shoot(`clinic-${resource.value}-${operation.value}`);
					walked++;
				}
			}
			expect(walked).toBe(resources.reduce((sum, resource) => sum + operationsOf(resource.value).length, 0));
		}),
		4 * 60_000,
	);

	(listLocator ? it : it.skip)(
		`picks a record from a resource locator list${listLocator ? ` (${listLocator.resource} → ${listLocator.operation}: ${listLocator.property.displayName})` : ' (the node has none yet)'}`,
		n8n.run(async () => {
			const { property, mode, resource, operation } = listLocator!;
			// Something to list: a live subscription of the credential's account.
			const made = await serviceCall(sim, 'POST', '/webhooks', {
				url: 'https://n8n.example.test/webhook/browser-list',
				topic: `${sim.topicPrefix}.patient`,
				event_name: 'patient-created',
				authentication_data: { secret: 'browser-list-secret-0123456789abcdef' },
			});
			expect(made.status).toBe(201);
			await openClinicStep();
			await selectOption(page, 'resource', resources.find((option) => option.value === resource)!.name);
			await selectOption(page, 'operation', operationsOf(resource).find((option) => option.value === operation)!.name);
			const locator = page.getByTestId(`parameter-input-${property.name}`);
			const modeSelector = locator.getByTestId('rlc-mode-selector');
			if (!(await modeSelector.innerText()).includes(mode.displayName)) {
				await modeSelector.click();
				await page.locator('.el-select-dropdown__item:visible').filter({ hasText: mode.displayName }).first().click();
			}
			await locator.getByTestId('rlc-input').click();
			// The list is teleported out of the locator's own element: its items are found page-wide.
			const first = page.getByTestId('rlc-item').first();
			const picked = (await first.innerText()).trim();
			expect(picked).not.toBe('');
			await first.click();
			// The field shows the picked record (the test id sits on the input itself or on its wrapper).
			const value = (
				await locator
					.getByTestId('rlc-input')
					.evaluate((element) => {
						const own = (element as unknown as { value?: unknown }).value;
						if (typeof own === 'string') return own;
						const inner = element.querySelector('input') as unknown as { value?: string } | null;
						return inner?.value ?? element.textContent ?? '';
					})
			).trim();
			expect(value).not.toBe('');
			expect(picked).toContain(value);
			await shoot(`clinic-${resource}-${operation}-locator`);
		}),
		3 * 60_000,
	);

	it.each(triggers.map((trigger) => [trigger.displayName, trigger] as const))(
		'opens the %s panel from the nodes panel',
		(_name, trigger) =>
			n8n.run(async () => {
				await ensureSignedIn();
				await page.goto('/workflow/new');
				// The nodes panel lists a trigger without its " Trigger" suffix, under the action
				// node's entry when they share a name.
				const listed = trigger.displayName.replace(/ Trigger$/, '');
				await pickFromNodesPanel(page, listed, listed, trigger.displayName);
				const events = optionsOf(trigger.properties.find((property) => property.name === 'events'));
				// A trigger with events lists them as "On ..." entries first: the panel opens on a
				// click on one. The list can still be sliding in (its first item the search result
				// just clicked), so each try waits a moment for the panel before clicking again.
				const ndv = page.getByTestId('ndv');
				for (let tries = 0; tries < 3; tries++) {
					if (await ndv.waitFor({ timeout: 3_000 }).then(() => true, () => false)) break;
					await creatorItems(page).first().click();
				}
				await ndv.waitFor();
				await expect(page.getByTestId('node-title-container').innerText()).resolves.toContain(trigger.defaults.name);
				const values = events.length > 0 ? { events: [events[0].value] } : {};
				await expectPanelShows(expectedLabels(trigger, values));
				const shot = await shoot(`trigger-${trigger.name}`);
				if (trigger.name === 'clinicTrigger') {
					// The notice for an n8n without a public address names the trigger that needs none.
					await expect(page.getByTestId('ndv').innerText()).resolves.toContain('use the Clinic Event Log Trigger instead');
					documented.trigger = shot;
				}
				await closePanel(page);
			})(),
		2 * 60_000,
	);

	/** n8n 2.x opens its Production Checklist over a published workflow; the video shows the run instead. */
	const closeProductionChecklist = async () => {
		// It opens a moment after the page: wait a little for it; nothing when none comes.
		const close = page.getByTestId('suggested-actions-close');
		if (await close.waitFor({ timeout: 3_000 }).then(() => true, () => false)) {
			await close.click();
			await close.waitFor({ state: 'hidden' });
		}
		await page.waitForTimeout(500);
	};

	/** Opens a node of the workflow on screen by its name. */
	const openNode = async (name: string) => {
		await page.getByTestId('canvas-node').filter({ hasText: name }).first().dblclick();
		await page.getByTestId('ndv').waitFor();
		await settled(page.getByTestId('ndv'));
	};

	it(
		'opens the flagship example with every field in a known state',
		n8n.run(async () => {
			await ensureSignedIn();
			const { name, nodes, connections, settings } = loadExample(FLAGSHIP, sim);
			const [id] = await restImportWorkflows(server, [{ name, nodes, connections, settings }]);
			await page.goto(`/workflow/${id}`);
			await page.getByTestId('canvas-node').first().waitFor();
			documented.flagship = await shoot('flagship-canvas', 'page');
			for (const node of nodes.filter((entry) => entry.type.endsWith('.clinic'))) {
				await openNode(node.name);
				// Every id field is a resource locator showing its mode (By ID), not a blank "Mode..." selector.
				const modes = await page.getByTestId('ndv').getByTestId('rlc-mode-selector').all();
				expect(modes.length).toBeGreaterThan(0);
				for (const mode of modes) await expect(mode.locator('input').inputValue()).resolves.toBe('By ID');
				if (node.name === 'Email Invoice') {
					// Before any run, the input shows Sign Invoice's fields from its output schema.
					const input = page.getByTestId('ndv-input-panel');
					await input.getByText('signed_at').first().waitFor();
					await expect(input.innerText()).resolves.toContain('Sign Invoice');
					documented.schemaPreview = await shoot('flagship-email-invoice-schema');
				}
				const shot = await shoot(`flagship-${node.name.toLowerCase().replace(/\s+/g, '-')}`);
				if (node.name === 'Sign Invoice') documented.flagshipSign = shot;
				await closePanel(page);
			}
		}),
		2 * 60_000,
	);

	it(
		'a consultation finishes: the flagship example signs and e-mails its invoice and keeps the PDF, recorded as the demo video',
		n8n.run(async () => {
			await ensureSignedIn();
			const { name, nodes, connections, settings } = loadExample(FLAGSHIP, sim);
			const [id] = await restImportWorkflows(server, [{ name, nodes, connections, settings }]);
			const credential = simulatorCredentials(sim)[0];
			await video.record();
			try {
				// The credential's connection test, as a user sees it in its dialog.
				await video.caption('2/5  The Clinic API credential: n8n tests the connection (Retry tests it again)');
				const tested = await testCredentialInDialog(page, importedCredentialId(n8n.ctx, credential.id!));
				expect(tested.status).toBe('OK');
				expect(tested.banner).toContain('Connection tested successfully');
				await video.caption('2/5  Connection tested successfully: the clinic service accepted the sign-in');
				await page.waitForTimeout(1000);
				video.hold(3);
				await closeCredentialDialog(page);

				// One operation run from the editor: Get Many waiting rooms, its output as a table.
				await video.caption('3/5  One operation: Clinic → Waiting Room → Get Many, then Execute step');
				await openClinicStep();
				await credentialChosen(page, credential.name);
				await page.getByTestId('node-execute-button').click();
				const output = page.getByTestId('output-panel');
				await output.getByText(`${sim.data.waitingRooms.length} items`).waitFor();
				await output.getByRole('radio', { name: 'Table' }).click();
				await expect(output.getByTestId('ndv-data-container').innerText()).resolves.toContain(String(sim.data.waitingRooms[0].name));
				await video.caption(`3/5  The clinic service's ${sim.data.waitingRooms.length} waiting rooms, as n8n items`);
				await page.waitForTimeout(1000);
				video.hold(3);

				// The flagship example, published from the editor: its Clinic Trigger subscribes.
				await page.goto(`/workflow/${id}`);
				await video.caption('4/5  The flagship example: a consultation finishes → sign, e-mail and keep the invoice PDF');
				await page.getByTestId('canvas-node').first().waitFor();
				await settled(page.getByTestId('canvas-node').first());
				video.hold(3);
				await video.caption('4/5  Publish the workflow: the Clinic Trigger subscribes to the clinic service');
				await publishInEditor(page);
				if (n8n.ctx.asyncPublication) await server.waitForPublication(id);
				const live = await server.getWorkflow(id);
				expect(Boolean(live.active || live.activeVersionId)).toBe(true);
				await closeProductionChecklist();
				await page.waitForTimeout(1000);
				video.hold(2);

				// A consultation finishes at the service: the trigger fires and the run appears in Executions.
				await page.goto(`/workflow/${id}/executions`);
				await closeProductionChecklist();
				await video.caption('5/5  A consultation finishes in the clinic service: the Clinic Trigger fires');
				await page.waitForTimeout(1500);
				const consultation = sim.data.consultations.get(1)!;
				const record = await sim.emit('consultation', 'consultation-finished', { id: consultation.id, encounter_id: consultation.encounter_id });
				expect(record.logs.map((log) => log.response_code)).toEqual([200]);
				const [execution] = await server.waitForExecutions(id, 1, { timeoutMs: 60_000 });
				expect(execution.status).toBe('success');
				expect(sim.data.invoices.get(1)!.signed_at).not.toBeNull();
				expect(sim.data.invoiceEmails).toEqual(expect.arrayContaining([expect.objectContaining({ invoice_id: 1 })]));
				// The executions list refreshes itself: the new run shows up there.
				await page.waitForTimeout(5000);
				video.hold(2);

				// The run as n8n's executions view shows it: every step green, the PDF kept by the last one.
				await page.goto(`/workflow/${id}/executions/${execution.id}`);
				await video.caption('5/5  The run: every step green (invoice signed, e-mailed, PDF downloaded)');
				await page.getByTestId('canvas-node').filter({ hasText: 'Download PDF' }).first().waitFor({ timeout: 30_000 });
				await closeProductionChecklist();
				await page.waitForTimeout(3000);
				video.hold(4);
			} finally {
				await video.pause();
			}
			await server.deactivateWorkflow(id);

			const file = join(shots, 'demo.mp4');
			const saved = video.save(file, { maxSeconds: 280, captions: join(shots, 'demo.vtt') });
			console.log(`demo video: ${saved.seconds.toFixed(1)} s, ${Math.round(saved.bytes / 1024)} KiB, ${saved.cues.length} captions, ${file}`);
			expect(saved.seconds).toBeGreaterThan(5);
			expect(saved.seconds).toBeLessThanOrEqual(300);
			expect(saved.bytes).toBeLessThan(8 * 1024 * 1024);
			// Every step of the video has its caption (scenes 1 to 5), in the track too.
			for (const step of ['1/5', '2/5', '3/5', '4/5', '5/5']) expect(saved.cues.some((cue) => cue.text.startsWith(step))).toBe(true);
			expect(saved.cues[saved.cues.length - 1].end).toBeLessThanOrEqual(saved.seconds + 0.5);
			documented.demo = file;
		}),
		6 * 60_000,
	);

	it(
		'shows a refused password in plain words',
		n8n.run(async () => {
			const node = (name: string, type: string, position: [number, number], parameters: object, extra: object = {}) => ({
				id: name,
				name,
				type,
				typeVersion: 1,
				position,
				parameters,
				...extra,
			});
			const workflow = {
				name: 'Sign-in error',
				nodes: [
					node('Start', 'n8n-nodes-base.manualTrigger', [0, 0], {}),
					{
						...node('Get Many Subscriptions', 'n8n-nodes-clinic.clinic', [220, 0], { resource: 'webhookSubscription', operation: 'getAll' }),
						typeVersion: 1.1,
						credentials: { clinicApi: WRONG_PASSWORD },
					},
				],
				connections: { Start: { main: [[{ node: 'Get Many Subscriptions', type: 'main', index: 0 }]] } },
				settings: {},
			};
			const [id] = await restImportWorkflows(server, [workflow]);
			await ensureSignedIn();
			await page.goto(`/workflow/${id}`);
			await openNode('Get Many Subscriptions');
			await page.getByTestId('node-execute-button').click();
			const output = page.getByTestId('output-panel');
			try {
				await output.getByText('The clinic service refused the username or password').first().waitFor();
			} finally {
				documented.signInError = await shoot('sign-in-error');
			}
			const shown = await output.innerText();
			expect(shown).toContain('Check both in the Clinic API credential');
			expect(shown).not.toContain('invalid_grant');
			expect(shown).not.toContain('not-the-password');
			await closePanel(page);
		}),
		3 * 60_000,
	);

	it('logged no console error but the allowed ones, and no failed request to the package\'s methods', () => {
		const unexplained = consoleErrors.filter((text) => !ALLOWED_CONSOLE_ERRORS.some(({ pattern }) => pattern.test(text)));
		expect(unexplained).toEqual([]);
		expect(failedRequests).toEqual([]);
	});

	afterAll(() => {
		if (process.env.UPDATE_DOC_SCREENSHOTS !== '1') return;
		const docs = join(REPO_ROOT, 'docs', 'screenshots');
		mkdirSync(docs, { recursive: true });
		for (const [name, file] of Object.entries(documented)) {
			copyFileSync(file, join(docs, `${name}${file.endsWith('.mp4') ? '.mp4' : '.png'}`));
			// The video's captions track goes with it.
			const captions = file.replace(/\.mp4$/, '.vtt');
			if (file.endsWith('.mp4') && existsSync(captions)) copyFileSync(captions, join(docs, `${name}.vtt`));
		}
	});
});
