/**
 * What the action tests share: one simulator per test file, the demo credentials, a
 * runner for the Clinic node, and readers of the simulator's request log.
 */
import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import type { IBinaryData, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { forgetProcessMemory, runClinicNode, stopPendingRuns } from '../helpers';
import type { RunClinicNodeOptions, RunClinicNodeResult } from '../helpers';
import { passwordCredentialData, startSimulator } from '../simulator';
import type { RequestLogEntry, Simulator, SimulatorOptions } from '../simulator';

export interface Harness {
	sim: Simulator;
	/** Runs the node with the demo password credential unless `credentials` says otherwise. */
	run(parameters: INodeParameters, options?: Partial<RunClinicNodeOptions>): Promise<RunClinicNodeResult>;
	/** Spec requests since the last reset, without the token requests. */
	requests(): RequestLogEntry[];
}

/** Starts a simulator for the file and resets it (and the token cache) before each test. */
export function useSimulator(options: SimulatorOptions = {}): Harness {
	const harness = {} as Harness;
	beforeAll(async () => {
		harness.sim = await startSimulator(options);
	});
	afterAll(async () => {
		await harness.sim?.close();
	});
	beforeEach(() => {
		harness.sim.reset();
		// Each test starts as a fresh n8n process would: nothing learned about the host or a session.
		forgetProcessMemory();
	});
	afterEach(async () => {
		// A test that timed out stops its own run: nothing it would still send reaches the next test.
		await stopPendingRuns();
		expect(harness.sim.internalErrors()).toEqual([]);
	});
	harness.run = async (parameters, options = {}) =>
		await runClinicNode({
			credentials: { clinicApi: integrationCredentials(harness.sim) },
			...options,
			// As the editor saves a node: Get People holds no staff Authentication (hidden there, so not saved).
			parameters: parameters.operation === 'getPeople' ? parameters : { authentication: 'clinicApi', ...parameters },
		});
	harness.requests = () => harness.sim.log.filter((entry) => entry.path !== '/api/v1/oauth/token');
	return harness;
}

export function integrationCredentials(sim: Simulator, extra: Record<string, string> = {}) {
	return passwordCredentialData(sim, extra);
}

/** The JSON of the node's first output. */
export function jsonOf(result: RunClinicNodeResult): Array<Record<string, unknown>> {
	if (result.error) throw new Error(`the node failed: ${result.error.message}`);
	return (result.output?.[0] ?? []).map((item) => item.json as Record<string, unknown>);
}

export function itemsOf(result: RunClinicNodeResult): INodeExecutionData[] {
	if (result.error) throw new Error(`the node failed: ${result.error.message}`);
	return result.output?.[0] ?? [];
}

export async function bytesOf(binary: IBinaryData): Promise<Buffer> {
	return await Container.get(BinaryDataService).getAsBuffer(binary);
}

/** The error's message and description, as the user reads them. */
export function errorText(result: RunClinicNodeResult): string {
	const error = result.error as (Error & { description?: string }) | undefined;
	if (!error) throw new Error('the node did not fail');
	return `${error.message} ${error.description ?? ''}`;
}

/** The item index n8n recorded for the error. */
export function errorItemIndex(result: RunClinicNodeResult): number | undefined {
	return (result.error as { context?: { itemIndex?: number } } | undefined)?.context?.itemIndex;
}
