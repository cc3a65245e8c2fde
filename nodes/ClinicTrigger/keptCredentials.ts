/**
 * The Clinic Trigger's credential, kept in process memory between deliveries for
 * CREDENTIAL_KEPT_MS. n8n 2.x makes every credential read a database query, a decrypt and
 * an expression isolate: the largest share of a delivery's cost in a steady stream. n8n
 * tells a node nothing when a credential is edited, so a signing key replaced in n8n is used
 * from the first read after that, within CREDENTIAL_KEPT_MS; a delivery the kept key does
 * not verify is checked again with a read made after it arrived (see receive.ts). Deliveries
 * arriving together share one read (freshReads.ts). Kept only in memory, never in static
 * data or logs.
 */
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { keepNewest, keptInProcess } from '../../credentials/ClinicProcessMemory';
import { FreshReads } from '../shared/freshReads';

export const CREDENTIAL_KEPT_MS = 5_000;
const CREDENTIALS_KEPT = 1_000;

interface Kept {
	value: ICredentialDataDecryptedObject;
	readAt: number;
}

const kept = keptInProcess(
	'credentials kept for deliveries',
	`${CREDENTIALS_KEPT} triggers and credentials, ${CREDENTIAL_KEPT_MS / 1000} s each`,
	new Map<string, Kept>(),
);
const reads = new FreshReads<ICredentialDataDecryptedObject>();

/** A delivery's place in time: reads started after it hold whatever was saved when it arrived. */
export function credentialArrival(): number {
	return reads.arrival();
}

/**
 * The credential for `key` (a trigger and one of its credentials): the one kept from a read
 * made less than CREDENTIAL_KEPT_MS ago, unless `fresh`; else a read that started after
 * `arrivedAt`, kept for the next deliveries. `fromMemory` says which it was.
 */
export async function triggerCredential(
	key: string,
	arrivedAt: number,
	read: () => Promise<ICredentialDataDecryptedObject>,
	fresh: boolean,
): Promise<{ value: ICredentialDataDecryptedObject; fromMemory: boolean }> {
	const known = kept.get(key);
	if (!fresh && known && Date.now() - known.readAt < CREDENTIAL_KEPT_MS) return { value: known.value, fromMemory: true };
	const startedAt = Date.now();
	const value = await reads.read(key, arrivedAt, read);
	keepNewest(kept, key, { value, readAt: startedAt }, CREDENTIALS_KEPT);
	return { value, fromMemory: false };
}
