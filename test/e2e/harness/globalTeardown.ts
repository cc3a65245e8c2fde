/**
 * Jest `globalTeardown` of the e2e project: stops the lane's shared n8n processes
 * (laneServer.ts), once every test file of the lane has run.
 */
import { stopLaneServers } from './laneServer';

export default async function globalTeardown(): Promise<void> {
	await stopLaneServers();
}
