/**
 * Optional jest `globalSetup` for the e2e project: installs every tested n8n version in
 * parallel before any test file starts (a first run then takes one install's time
 * instead of the sum). With a warm cache it returns at once. Also the run's temp folder, as
 * the unit project makes it (test/helpers/unitTempSetup.cjs): n8nEnv.ts puts a folder in it.
 */
import { ALL_N8N_VERSIONS, prepareN8n } from './install';

const makeRunTemp = require('../../helpers/unitTempSetup.cjs') as () => void;

export default async function globalSetup(): Promise<void> {
	makeRunTemp();
	await prepareN8n(ALL_N8N_VERSIONS);
}
