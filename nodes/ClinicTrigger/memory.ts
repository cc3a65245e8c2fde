/**
 * The Clinic Trigger's stores in process memory, each bounded by count and age (the third,
 * the event-log reads, is in newEvents.ts). None of it is the record of what ran: that is
 * the trigger's cursor in the node's static data, which n8n saves.
 */
import { sleep } from 'n8n-workflow';
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { keptInProcess } from '../../credentials/ClinicProcessMemory';

/** A map bounded by count (oldest first out) and age (never answered, gone at the next write; a store of seconds is swept on time). */
export class Kept<V> {
	private readonly entries = new Map<string, { value: V; at: number }>();
	private sweeping = false;

	constructor(
		readonly capacity: number,
		readonly maxAgeMs: number,
	) {}

	get size(): number {
		return this.entries.size;
	}

	/** The value, unless it was set more than `maxAgeMs` ago (at most the store's age). */
	get(key: string, maxAgeMs = this.maxAgeMs): V | undefined {
		const entry = this.entries.get(key);
		return entry && Date.now() - entry.at < Math.min(maxAgeMs, this.maxAgeMs) ? entry.value : undefined;
	}

	set(key: string, value: V): void {
		this.forgetOld();
		this.entries.delete(key);
		this.entries.set(key, { value, at: Date.now() });
		while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
		if (this.maxAgeMs <= 60_000 && !this.sweeping) void this.sweep();
	}

	delete(key: string): void {
		this.entries.delete(key);
	}

	clear(): void {
		this.entries.clear();
	}

	/** Entries are in the order they were set: the old ones are at the start. */
	private forgetOld(): void {
		for (const [key, entry] of this.entries) {
			if (Date.now() - entry.at < this.maxAgeMs) return;
			this.entries.delete(key);
		}
	}

	private async sweep(): Promise<void> {
		this.sweeping = true;
		while (this.entries.size > 0) {
			const oldest = this.entries.values().next().value!;
			await sleep(Math.max(1, oldest.at + this.maxAgeMs - Date.now()));
			this.forgetOld();
		}
		this.sweeping = false;
	}
}

/** How long a credential read for a delivery serves the next deliveries. */
export const CREDENTIAL_KEPT_MS = 5_000;

/**
 * 1. The credential of each trigger, for CREDENTIAL_KEPT_MS: n8n makes every credential read a
 *    database query and a decrypt. Deliveries arriving together share one read (`startedAt`,
 *    on the monotonic clock, tells whether it started after a delivery arrived). Never in static data or logs.
 */
type CredentialRead = { read: Promise<ICredentialDataDecryptedObject>; startedAt: number };
export const credentials = keptInProcess('credentials kept for deliveries', '1,000 triggers, 5 s each', new Kept<CredentialRead>(1_000, CREDENTIAL_KEPT_MS));

/**
 * 2. Each trigger's subscriptions: when last listed, the resubscribe under way (one at a time), when an unverified delivery last started one,
 *    when one last failed a delivery, and the stale subscriptions it left for the next.
 */
export interface TriggerState {
	listedAt?: number;
	resubscribing?: Promise<unknown>;
	unverifiedAt?: number;
	failedAt?: number;
	stale?: { reason: 'signingKeyChanged' | 'subscriptionDisabled' | 'subscriptionDeleted'; keys: string[] };
}
export const triggers = keptInProcess('subscription checks of each trigger', '1,000 triggers, an hour each', new Kept<TriggerState>(1_000, 60 * 60_000));
