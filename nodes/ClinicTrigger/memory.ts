/** The Clinic Trigger's one store in process memory: an entry per trigger and n8n mode, bounded by count. */
import { sleep } from 'n8n-workflow';
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { keepNewest, keptInProcess } from '../../credentials/ClinicProcessMemory';
import { ANSWER_WITHIN_MS } from './newEvents';
import type { LogReads } from './sharedRead';
import type { SubscriptionWatch } from './resubscribe';

/** How many triggers' entries are kept at most: past it, the least recently used goes. */
export const TRIGGERS_KEPT = 1_000;

/** A trigger's entry: its subscriptions' watch, its reads of the log, and its credential reads (never in static data or logs), each shared ANSWER_WITHIN_MS (n8n makes every read a database query and a decrypt). */
export interface TriggerMemory extends SubscriptionWatch, LogReads {
	credentials: Map<string, { read: Promise<ICredentialDataDecryptedObject>; startedAt: number }>;
}

const triggers = keptInProcess('the memory of each Clinic Trigger', `${TRIGGERS_KEPT} triggers`, new Map<string, TriggerMemory>());

/** The trigger's entry, kept while it is among the TRIGGERS_KEPT used last. */
export function memoryOf(trigger: string): TriggerMemory {
	const memory = triggers.get(trigger) ?? { credentials: new Map() };
	keepNewest(triggers, trigger, memory, TRIGGERS_KEPT);
	return memory;
}

/** The credential read in the last ANSWER_WITHIN_MS, or with `fresh` one read after the delivery `arrived`; `earlier`: read before it arrived. */
export async function credentialFor(memory: TriggerMemory, key: string, arrived: number, fresh: boolean, read: () => Promise<ICredentialDataDecryptedObject>) {
	const kept = memory.credentials.get(key);
	// Same millisecond: counted as before the arrival (one read too many rather than a stale one).
	if (kept && (!fresh || kept.startedAt > arrived)) return { value: await kept.read, earlier: kept.startedAt <= arrived };
	const entry = { read: read(), startedAt: Date.now() };
	memory.credentials.set(key, entry);
	const forget = () => memory.credentials.get(key) === entry && memory.credentials.delete(key);
	void sleep(ANSWER_WITHIN_MS).then(forget);
	entry.read.catch(forget);
	return { value: await entry.read, earlier: false };
}
