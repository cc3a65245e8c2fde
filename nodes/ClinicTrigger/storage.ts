/** The subscriptions in static data: `{[eventKey]: {id, topic, keyId}}`, no secret; 0.1.0's hold theirs until the next activation replaces them. */
import type { IDataObject, INode } from 'n8n-workflow';

import { findEvent } from '../shared/catalog';
import { signingKeyId, subscriptionSecret } from './signature';

/** `topic` in full (`clinic-38729.patient`), so deliveries need no credential; `keyId` names the signing key the secret came from; `legacySecret` as 0.1.0 stored it. */
export interface StoredSubscription {
	id: number | string;
	topic: string;
	keyId?: string;
	legacySecret?: string;
}

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

export function storedSubscriptions(staticData: IDataObject): Map<string, StoredSubscription> {
	const stored = new Map<string, StoredSubscription>();
	for (const [key, value] of Object.entries(staticData)) {
		if (!findEvent(key) || !value || typeof value !== 'object') continue;
		const { id, topic, keyId, secret } = value as Record<string, unknown>;
		if (typeof id !== 'number' && !nonEmptyString(id)) continue;
		const entry = { id, topic: typeof topic === 'string' ? topic : '' };
		if (nonEmptyString(keyId)) stored.set(key, { ...entry, keyId });
		else if (nonEmptyString(secret)) stored.set(key, { ...entry, legacySecret: secret });
	}
	return stored;
}

/** Stores a derived subscription; a legacy entry is never written back. */
export function storeSubscription(staticData: IDataObject, key: string, entry: StoredSubscription): void {
	const next = { id: entry.id, topic: entry.topic, keyId: entry.keyId ?? '' };
	const current = staticData[key] as IDataObject | undefined;
	// n8n saves the workflow's static data when any of it is set: only a change is written.
	if (current && current.id === next.id && current.topic === next.topic && current.keyId === next.keyId && Object.keys(current).length === 3) return;
	staticData[key] = next;
}

/** What identifies this trigger node in its secrets: its webhook id (part of its address). */
export function triggerIdOf(node: INode): string {
	return node.webhookId || node.id;
}

/** A stored subscription this version keeps as it is: derived from the current key. */
export function isCurrent(entry: StoredSubscription, signingKey: string): boolean {
	return !entry.legacySecret && !!signingKey && entry.keyId === signingKeyId(signingKey);
}

/** The secret of a stored subscription; undefined when the signing key is not the one it was derived from. */
export function secretOf(triggerId: string, key: string, entry: StoredSubscription, signingKey: string): string | undefined {
	return entry.legacySecret || (isCurrent(entry, signingKey) ? subscriptionSecret(signingKey, triggerId, key) : undefined);
}

/** Events whose stored subscription was made with another signing key than the credential's. */
export function eventsOfOldSigningKey(stored: Map<string, StoredSubscription>, signingKey: string): string[] {
	if (!signingKey) return [];
	return [...stored].filter(([, entry]) => !entry.legacySecret && !isCurrent(entry, signingKey)).map(([key]) => key);
}
