/**
 * The leak check of issue 3: no password, access token or refresh token may appear in
 * output items, error messages or error descriptions. Collect every secret a test saw
 * (the store's saved token fields, the passwords it typed), then search everything the
 * user could see, serialised whole.
 */
import type { IDataObject } from 'n8n-workflow';

import type { CredentialStore } from './credentialsHelper';

/** Credential fields whose values are secrets. */
export const SECRET_FIELDS = ['password', 'accessToken', 'refreshToken', 'rotatedRefreshToken', 'portalToken'];

/** Collects secret values: every secret field of every credential the store saved, ever, plus `extra`. */
export class SecretCollector {
	private readonly values = new Set<string>();

	add(...values: Array<string | undefined | null>): this {
		for (const value of values) if (typeof value === 'string' && value.length >= 4) this.values.add(value);
		return this;
	}

	addFromData(data: IDataObject | undefined): this {
		for (const field of SECRET_FIELDS) this.add(data?.[field] as string | undefined);
		return this;
	}

	/** The store's current data and every version n8n saved. */
	addFromStore(store: CredentialStore): this {
		for (const record of store.all()) this.addFromData(record.data);
		for (const update of store.updates) this.addFromData(update.data);
		return this;
	}

	list(): string[] {
		return [...this.values];
	}
}

/** Everything about an error a user can see or n8n stores: message, description, and the whole object. */
export function errorTexts(error: unknown): string[] {
	if (error === undefined || error === null) return [];
	const record = error as { message?: unknown; description?: unknown; stack?: unknown };
	const texts = [String(record.message ?? ''), String(record.description ?? ''), String(record.stack ?? '')];
	try {
		texts.push(JSON.stringify(error));
	} catch {
		texts.push(String(error));
	}
	try {
		// Own enumerable and non-enumerable keys (context, cause, ...), one level down.
		for (const key of Object.getOwnPropertyNames(error)) {
			const value = (error as Record<string, unknown>)[key];
			if (value && typeof value === 'object') texts.push(safeStringify(value));
			else if (typeof value === 'string') texts.push(value);
		}
	} catch {
		// Best effort: the JSON above is the main check.
	}
	return texts;
}

function safeStringify(value: unknown): string {
	const seen = new WeakSet<object>();
	try {
		return JSON.stringify(value, (_key, item: unknown) => {
			if (item && typeof item === 'object') {
				if (seen.has(item)) return '[circular]';
				seen.add(item);
			}
			if (Buffer.isBuffer(item)) return item.toString('utf8');
			return item;
		});
	} catch {
		return String(value);
	}
}

/** The secrets found in the given values (serialised whole); an empty list means no leak. */
export function findLeaks(secrets: string[], ...values: unknown[]): Array<{ secret: string; where: string }> {
	const leaks: Array<{ secret: string; where: string }> = [];
	const texts = values.flatMap((value) =>
		value instanceof Error || (value && typeof value === 'object' && 'message' in (value as object) && 'stack' in (value as object))
			? errorTexts(value)
			: [typeof value === 'string' ? value : safeStringify(value)],
	);
	for (const secret of secrets) {
		for (const text of texts) {
			const at = text.indexOf(secret);
			if (at !== -1) {
				leaks.push({ secret: `${secret.slice(0, 3)}…(${secret.length} chars)`, where: text.slice(Math.max(0, at - 80), at) });
				break;
			}
		}
	}
	return leaks;
}
