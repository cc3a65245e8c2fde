/**
 * The process-wide n8n setup the harness needs: a throw-away n8n user folder, a fixed
 * encryption key (so n8n-core does not write one and print about it), quiet logs, and
 * n8n-core's BinaryDataService in filesystem mode inside the temp folder, as n8n 2.x runs
 * it by default. Import this module before anything asks @n8n/di's Container for an
 * n8n-core service: the configs read these variables when they are first built.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Inside the run's temp folder, which jest removes at the end (test/helpers/unitTempSetup.cjs).
export const N8N_TEST_FOLDER = mkdtempSync(join(process.env.CLINIC_UNIT_TMP ?? tmpdir(), 'clinic-n8n-'));
export const BINARY_DATA_FOLDER = join(N8N_TEST_FOLDER, 'binary-data');
mkdirSync(BINARY_DATA_FOLDER, { recursive: true });

process.env.N8N_USER_FOLDER = N8N_TEST_FOLDER;
process.env.N8N_ENCRYPTION_KEY ??= 'clinic-tests-encryption-key';
process.env.N8N_LOG_LEVEL ??= 'silent';
process.env.N8N_DEFAULT_BINARY_DATA_MODE = 'filesystem';
process.env.N8N_BINARY_DATA_STORAGE_PATH = BINARY_DATA_FOLDER;
process.env.N8N_DIAGNOSTICS_ENABLED = 'false';

let ready: Promise<void> | undefined;

/** Initialises n8n-core's BinaryDataService (filesystem mode) once per process. */
export async function ensureN8nCore(): Promise<void> {
	ready ??= (async () => {
		// Required here, not at the top, so the variables above are set first whatever the import order.
		const { Container } = require('@n8n/di') as typeof import('@n8n/di');
		const { BinaryDataService } = require('n8n-core') as typeof import('n8n-core');
		await Container.get(BinaryDataService).init();
	})();
	await ready;
}
