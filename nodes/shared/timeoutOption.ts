/** The Timeout option of the Clinic node and the Clinic Event Log Trigger, and how it is read. */
import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { DEFAULT_TIMEOUT_MS } from './transport';

export function timeoutOption(description: string): INodeProperties {
	return {
		displayName: 'Timeout (Seconds)',
		name: 'timeout',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 3600 },
		// DEFAULT_TIMEOUT_MS in seconds, written out: n8n's lint reads the default as a literal.
		default: 60,
		description,
	};
}

/** The option in ms; the default when it is not set (or not a positive number). */
export function timeoutMsOf(options: IDataObject): number {
	const seconds = Number(options.timeout);
	return seconds > 0 ? seconds * 1000 : DEFAULT_TIMEOUT_MS;
}
