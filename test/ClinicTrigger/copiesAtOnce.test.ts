/**
 * Copies of one delivery arriving together (nodes/ClinicTrigger/eventClaims.ts): the first
 * claims the event, the others wait for n8n's answer to it. A 2xx makes them repeats; an
 * error (n8n could not store the run) makes exactly one of them run the event instead.
 * n8n's storing of a run is played by deliverWebhook's `storeRun` (a delay, then success or
 * a 500), after webhook() returned, as n8n 2.x answers.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { forgetProcessMemory } from '../../credentials/ClinicProcessMemory';
import { activateTrigger } from '../helpers/trigger';
import type { DeliveryResult, HookResult } from '../helpers/trigger';
import { startSimulator } from '../simulator';
import type { Simulator } from '../simulator';
import { PATIENT_CREATED, credentialsFor, deliverSigned } from './support';

let sim: Simulator;
let activated: HookResult;
let secret = '';
const parameters: INodeParameters = { authentication: 'clinicApi', events: [PATIENT_CREATED], options: {} };

beforeAll(async () => {
	sim = await startSimulator({ allowHttpCallbacks: true });
	activated = await activateTrigger({ parameters, credentials: credentialsFor(sim) });
	if (activated.error) throw activated.error;
	const id = (activated.nodeStaticData[PATIENT_CREATED] as IDataObject).id;
	secret = sim.subscriptions().find((s) => s.id === id)!.authentication_data.secret;
});

afterAll(async () => {
	await sim.close();
});

beforeEach(() => {
	forgetProcessMemory();
});

/** Logs an event, then delivers `copies` identical copies of it at once; n8n refuses the first `refused` runs. */
async function copiesAtOnce(copies: number, refused: number): Promise<{ eventId: number; results: DeliveryResult[] }> {
	const value = { id: 50_000 + Math.floor(Math.random() * 10_000), first_name: 'Ana' };
	sim.seedEvents(1, 'patient', 'patient-created', () => value);
	const eventId = sim.events().at(-1)!.id;
	let toRefuse = refused;
	const results = await Promise.all(
		Array.from({ length: copies }, async () =>
			await deliverSigned({ parameters, activated, secret }, value, { delayMs: 300, fails: () => toRefuse-- > 0 }),
		),
	);
	return { eventId, results };
}

const runsOf = (results: DeliveryResult[]) => results.filter((result) => result.workflowData !== undefined);
const statuses = (results: DeliveryResult[]) => results.map((result) => result.response.status).sort();

it('three copies, n8n stores the first run: one run, the other two answered as repeats', async () => {
	const { eventId, results } = await copiesAtOnce(3, 0);
	expect(runsOf(results).map((result) => result.workflowData?.[0][0].json.eventId)).toEqual([eventId]);
	expect(statuses(results)).toEqual([200, 200, 200]);
	expect(results.filter((result) => (result.response.body as IDataObject | undefined)?.duplicate === true)).toHaveLength(2);
});

it('three copies, n8n refuses the first run (500): exactly one other copy runs the event', async () => {
	const { eventId, results } = await copiesAtOnce(3, 1);
	expect(statuses(results)).toEqual([200, 200, 500]);
	expect(runsOf(results).map((result) => result.workflowData?.[0][0].json.eventId)).toEqual([eventId]);
});

it('four copies, n8n refuses the first two runs: the third copy to claim it runs the event, once', async () => {
	const { eventId, results } = await copiesAtOnce(4, 2);
	expect(statuses(results)).toEqual([200, 200, 500, 500]);
	expect(runsOf(results).map((result) => result.workflowData?.[0][0].json.eventId)).toEqual([eventId]);
});
