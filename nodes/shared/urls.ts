/**
 * Base URL handling. Users are given the main API base already ending in `/api/v1`;
 * some type the bare host. Both, with or without a trailing slash, mean the same
 * (normalised in credentials/ClinicNetwork.ts, which the credentials use too).
 */
export { normaliseApiBaseUrl, normaliseWebhookBaseUrl } from '../../credentials/ClinicNetwork';

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
