/**
 * Base URL handling. Users are given the main API base already ending in `/api/v1`;
 * some type the bare host. Both, with or without a trailing slash, mean the same.
 */
const API_PREFIX = '/api/v1';

function trimSlashes(url: string): string {
	return url.trim().replace(/\/+$/, '');
}

/** `https://host`, `https://host/`, `https://host/api/v1/` -> `https://host/api/v1`. */
export function normaliseApiBaseUrl(url: string): string {
	const trimmed = trimSlashes(url);
	return trimmed.endsWith(API_PREFIX) ? trimmed : `${trimmed}${API_PREFIX}`;
}

/** The webhook service has no `/api/v1` prefix; only the trailing slash goes. */
export function normaliseWebhookBaseUrl(url: string): string {
	return trimSlashes(url);
}

/** Checks a base URL a user typed, returning a message that says what to fix, or undefined. */
export function describeBaseUrlProblem(url: string, fieldName: string): string | undefined {
	const value = (url ?? '').trim();
	if (!value) return `${fieldName} is empty: enter the address you were given, e.g. https://api.example.com/api/v1`;
	let parsed: URL;
	try {
		parsed = new URL(value);
	} catch {
		return `${fieldName} "${value}" is not a URL: it must start with https:// (or http:// for a local test server)`;
	}
	if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
		return `${fieldName} must start with https:// (or http:// for a local test server)`;
	}
	return undefined;
}

export function joinUrl(base: string, path: string): string {
	return `${base}${path.startsWith('/') ? path : `/${path}`}`;
}
