/** The workflow the Event Log Trigger e2e tests activate (single main and queue mode alike). */
import type { WorkflowImport } from '../harness';
import { DEMO_CREDENTIAL_IDS } from './examples';

/** The trigger node's name, to read what it emitted from an execution. */
export const EVENT_LOG_TRIGGER = 'Consultation Finished';

/**
 * The Clinic Event Log Trigger alone, polling every minute for finished consultations with
 * the examples' Clinic API credential (`simulatorCredentials`).
 */
export function eventLogWorkflow(): WorkflowImport {
	return {
		name: 'Finished consultations from the event log',
		nodes: [
			{
				id: 'event-log-trigger',
				name: EVENT_LOG_TRIGGER,
				type: 'n8n-nodes-clinic.clinicEventLogTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {
					pollTimes: { item: [{ mode: 'everyMinute' }] },
					authentication: 'clinicApi',
					events: ['consultation:consultation-finished'],
				},
				credentials: { clinicApi: { id: DEMO_CREDENTIAL_IDS.clinicApi, name: 'Clinic API (simulator)' } },
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}
