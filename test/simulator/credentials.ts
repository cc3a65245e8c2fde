/** What a Clinic password credential holds to reach a running simulator as its demo account. */
import type { Simulator } from './types';

export function passwordCredentialData<T extends Record<string, unknown>>(
	sim: Pick<Simulator, 'apiBaseUrl' | 'webhooksBaseUrl' | 'topicPrefix' | 'demo'>,
	overrides?: T,
): { baseUrl: string; webhookBaseUrl: string; topicPrefix: string; username: string; password: string } & T {
	return {
		baseUrl: sim.apiBaseUrl,
		webhookBaseUrl: sim.webhooksBaseUrl,
		topicPrefix: sim.topicPrefix,
		username: sim.demo.username,
		password: sim.demo.password,
		...(overrides as T),
	};
}
