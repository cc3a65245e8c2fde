/**
 * Optional jest `globalSetup` for the e2e project: installs every tested n8n version in
 * parallel before any test file starts (a first run then takes one install's time
 * instead of the sum). With a warm cache it returns at once.
 */
import { ALL_N8N_VERSIONS, prepareN8n } from './install';

export default async function globalSetup(): Promise<void> {
	await prepareN8n(ALL_N8N_VERSIONS);
}
