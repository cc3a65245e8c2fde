/**
 * Jest `globalTeardown` of the e2e project: stops the lane's shared n8n processes
 * (laneServer.ts), once every test file of the lane has run, and removes the run's temp
 * folder (globalSetup.ts).
 */
import { stopLaneServers } from './laneServer';

const removeRunTemp = require('../../helpers/unitTempTeardown.cjs') as () => void;

export default async function globalTeardown(): Promise<void> {
	await stopLaneServers();
	removeRunTemp();
}
