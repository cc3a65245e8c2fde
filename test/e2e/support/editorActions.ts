/**
 * Two moves in n8n 2.41's editor the demo video makes: a credential's connection test (its
 * dialog, opened by address) and publishing the workflow on screen.
 */
import type { Page } from 'playwright-core';

const SUCCESS = 'credentials-config-container-test-success';

/**
 * Opens the credential's dialog (n8n tests a saved credential as it opens), waits for the
 * success banner, then tests again with the banner's button (n8n's "Retry") and answers
 * what n8n's test endpoint said and what the banner shows.
 */
export async function testCredentialInDialog(page: Page, credentialId: string): Promise<{ status: string; banner: string }> {
	await page.goto(`/home/credentials/${credentialId}`);
	const dialog = page.getByTestId('credential-edit-dialog');
	await dialog.waitFor();
	const banner = dialog.getByTestId(SUCCESS);
	await banner.waitFor({ timeout: 60_000 });
	await page.waitForTimeout(1500);
	const answered = page.waitForResponse((response) => response.url().includes('/rest/credentials/test'));
	await banner.getByRole('button').first().click();
	const body = (await (await answered).json()) as { data?: { status?: string }; status?: string };
	await banner.waitFor();
	// The button says "Retry" again once the test is over.
	await banner.getByRole('button', { name: 'Retry', exact: true }).waitFor();
	return { status: String(body.data?.status ?? body.status), banner: (await banner.innerText()).trim() };
}

/** Closes the credential's dialog (nothing changed, so nothing to confirm). */
export async function closeCredentialDialog(page: Page): Promise<void> {
	await page.keyboard.press('Escape');
	await page.getByTestId('credential-edit-dialog').waitFor({ state: 'hidden' });
}

/** Publishes the workflow on screen: the header's Publish, then the dialog's Publish (its version name filled in by n8n). */
export async function publishInEditor(page: Page): Promise<void> {
	await page.getByTestId('workflow-open-publish-modal-button').click();
	const publish = page.getByTestId('workflow-publish-button');
	await publish.waitFor();
	for (const giveUpAt = Date.now() + 30_000; !(await publish.isEnabled()); await page.waitForTimeout(250)) {
		if (Date.now() > giveUpAt) throw new Error("the publish dialog's Publish button stayed disabled for 30 s");
	}
	await page.waitForTimeout(1000);
	await publish.click();
	await publish.waitFor({ state: 'hidden', timeout: 60_000 });
	// The first published workflow may get n8n's note on where its runs show up: read, closed.
	const gotIt = page.getByRole('button', { name: 'Got it', exact: true });
	if (await gotIt.waitFor({ timeout: 3_000 }).then(() => true, () => false)) {
		await page.waitForTimeout(1500);
		await gotIt.click();
	}
}
