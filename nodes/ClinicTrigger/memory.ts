/**
 * Everything the Clinic Trigger keeps in process memory, in one place: three stores, each
 * bounded by count and age. None of it is the record of what ran: that is the service's
 * event log, shared by every n8n process and kept across restarts. Memory holds only what
 * the log cannot know yet (a copy of a delivery still being answered) and saves reads.
 */
import { sleep } from 'n8n-workflow';
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { keptInProcess } from '../../credentials/ClinicProcessMemory';
import type { EventRecord } from '../shared/eventRecord';

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
 * 2. The duplicate check, per trigger and event: the event log read under way and the one
 *    queued after it with the payloads it waits for (`read:`), the events claimed here with the tries at the trigger's
 *    address the log showed then (`claim:`), and with Same Body Within Window the bodies
 *    accepted (`body:`, forgotten again when n8n did not store the run),  and the payloads (hashed)
 *    run here, with the claim a run without an id makes once the log answers (`ran:`).
 */
export type Taken =
	| { kind: 'read'; events: Promise<Logged[]>; next?: { wanted: Set<string>; events: Promise<Logged[]> } }
	| { kind: 'claim'; triesSeen: number }
	| { kind: 'body' }
	| { kind: 'ran'; claimed?: Promise<void> };
/** An event read from the log, with its payload as canonical JSON. */
export type Logged = { event: EventRecord; payload: string };
export const MAX_WINDOW_MS = 24 * 60 * 60_000;
export const taken = keptInProcess('deliveries taken (duplicate check)', '20,000 entries, a day each at most', new Kept<Taken>(20_000, MAX_WINDOW_MS));

/**
 * 3. Each trigger's subscriptions: when last listed and when each was made (`since`), the
 *    resubscribe under way (one at a time), when an unverified delivery last started one,
 *    when one last failed a delivery, and the stale subscriptions it left for the next.
 */
export interface TriggerState {
	listedAt?: number;
	since?: Record<string, string | undefined>;
	resubscribing?: Promise<unknown>;
	unverifiedAt?: number;
	failedAt?: number;
	stale?: { reason: 'signingKeyChanged' | 'subscriptionDisabled' | 'subscriptionDeleted'; keys: string[] };
}
export const triggers = keptInProcess('subscription checks of each trigger', '1,000 triggers, an hour each', new Kept<TriggerState>(1_000, 60 * 60_000));
