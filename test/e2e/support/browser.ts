/**
 * Debian's Chromium driven by playwright-core (it cannot download browsers here), and the
 * few n8n editor moves the browser test makes. n8n marks its editor with `data-test-id`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium, selectors, type BrowserContext, type Locator, type Page } from 'playwright-core';
import type { INodeProperties, INodeTypeDescription } from 'n8n-workflow';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags for a machine without network: no background connections, no sandbox (root). */
const CHROMIUM_FLAGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];

export interface Browser {
	context: BrowserContext;
	page: Page;
	close(): Promise<void>;
}

export async function launchChromium(baseURL: string): Promise<Browser> {
	if (!existsSync(CHROMIUM_PATH)) {
		throw new Error(`No Chromium at ${CHROMIUM_PATH}: run scripts/install-chromium.sh (npm run test:all does)`);
	}
	selectors.setTestIdAttribute('data-test-id');
	const userDataDir = mkdtempSync(join(tmpdir(), 'clinic-chromium-'));
	const context = await chromium.launchPersistentContext(userDataDir, {
		executablePath: CHROMIUM_PATH,
		headless: true,
		args: CHROMIUM_FLAGS,
		viewport: { width: 1280, height: 800 },
		baseURL,
	});
	const page = context.pages()[0] ?? (await context.newPage());
	// A bound on a hang, not a speed check: with the test lanes side by side on two cores, a
	// step n8n shows within a second on an idle machine can take tens of seconds.
	page.setDefaultTimeout(60_000);
	return {
		context,
		page,
		async close() {
			await context.close();
			rmSync(userDataDir, { recursive: true, force: true });
		},
	};
}

export function screenshotDir(root: string): string {
	const dir = join(root, 'screenshots');
	mkdirSync(dir, { recursive: true });
	return dir;
}

export async function signIn(page: Page, email: string, password: string): Promise<void> {
	await page.goto('/signin');
	await page.getByTestId('emailOrLdapLoginId').locator('input').fill(email);
	await page.getByTestId('password').locator('input').fill(password);
	await page.getByTestId('form-submit-button').click();
	await page.waitForURL(/\/(home|workflow)/);
}

export const creatorItems = (page: Page): Locator => page.getByTestId('node-creator').getByTestId('item-iterator-item');

/** Opens the nodes panel (first step or next step), searches and clicks the item with one of these names. */
export async function pickFromNodesPanel(page: Page, search: string, ...names: string[]): Promise<void> {
	const firstStep = page.getByTestId('canvas-plus-button');
	if (await firstStep.isVisible()) await firstStep.click();
	else await page.getByTestId('node-creator-plus-button').click();
	await page.getByTestId('node-creator-search-bar').fill(search);
	const named = names.map((name) => creatorItems(page).filter({ has: page.getByText(name, { exact: true }) }));
	await named.reduce((either, locator) => either.or(locator)).first().click();
}

/** Waits until the element stops moving (n8n slides its panels in). */
export async function settled(locator: Locator): Promise<void> {
	let last = '';
	for (let attempt = 0; attempt < 40; attempt++) {
		const box = JSON.stringify(await locator.boundingBox());
		if (box === last) return;
		last = box;
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

/**
 * Waits until the open node shows credential `name` chosen: n8n gives a new node a saved
 * credential a moment after its panel opens, and a step run before that fails with "Node
 * does not have any credentials set".
 */
export async function credentialChosen(page: Page, name: string): Promise<void> {
	const select = page.getByTestId('node-credentials-select').first();
	const giveUpAt = Date.now() + 60_000;
	let shown = '';
	while (Date.now() < giveUpAt) {
		shown = await select.evaluate((element) => {
			const input = element.querySelector('input') as unknown as { value?: string } | null;
			return `${input?.value ?? ''} ${element.textContent ?? ''}`.trim();
		});
		if (shown.includes(name)) return;
		await new Promise((resolve) => setTimeout(resolve, 250));
	}
	throw new Error(`the node's credential is still "${shown}" after 60 s, not "${name}"`);
}

export async function closePanel(page: Page): Promise<void> {
	await page.getByTestId('ndv-close-button').click();
	await page.getByTestId('ndv').waitFor({ state: 'hidden' });
}

/** Picks `option` in the dropdown of parameter `name` (options show name and description). */
export async function selectOption(page: Page, name: string, option: string): Promise<void> {
	await page.getByTestId(`parameter-input-${name}`).click();
	await page
		.locator('.el-select-dropdown__item:visible')
		.filter({ has: page.getByText(option, { exact: true }) })
		.first()
		.click();
	await page.locator('.el-select-dropdown__item:visible').first().waitFor({ state: 'hidden' });
}

type Values = Record<string, unknown>;

function matches(allowed: unknown[], value: unknown): boolean {
	return allowed.some((entry) => entry === value || (typeof entry === 'object' && entry !== null));
}

/**
 * The top-level parameters n8n shows for these values, per their displayOptions (values of
 * parameters not given are their defaults). Conditions objects (`_cnd`) count as met.
 */
export function shownProperties(description: INodeTypeDescription, given: Values): INodeProperties[] {
	// A node the editor adds has the default version (the highest when none is named).
	const version = description.defaultVersion ?? (Array.isArray(description.version) ? Math.max(...description.version) : description.version);
	// A name defined more than once (per resource, per version) takes its first definition's default here.
	const defaults = Object.fromEntries([...description.properties].reverse().map((p) => [p.name, p.default]));
	const values: Values = { '@version': version, ...defaults, ...given };
	const shown = (property: INodeProperties): boolean => {
		const { show, hide } = property.displayOptions ?? {};
		for (const [key, allowed] of Object.entries(show ?? {})) {
			if (!matches(allowed as unknown[], values[key.replace(/^\//, '')])) return false;
		}
		for (const [key, hidden] of Object.entries(hide ?? {})) {
			if ((hidden as unknown[]).includes(values[key.replace(/^\//, '')])) return false;
		}
		return true;
	};
	// A parameter shown by several entries (one per resource) appears once per matching entry.
	return description.properties.filter((property) => property.type !== 'hidden' && shown(property));
}
