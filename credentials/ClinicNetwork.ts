/**
 * What the credentials and the nodes both know about the service's addresses and about
 * network failures. It lives with the credentials so that they depend on nothing in
 * nodes/ (the nodes' transport depends on the credentials, not the other way round).
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

/**
 * Words for a network failure. n8n replaces any message that contains the raw code
 * (ECONNREFUSED, ...) with a generic text, which would hide which address to check.
 */
export function networkFailureWords(code: string | undefined): string {
	switch (code) {
		case 'ECONNREFUSED':
			return 'the connection was refused';
		case 'ENOTFOUND':
		case 'EAI_AGAIN':
			return 'the host name could not be found';
		case 'ETIMEDOUT':
		case 'ECONNABORTED':
		case 'UND_ERR_CONNECT_TIMEOUT':
		case 'UND_ERR_HEADERS_TIMEOUT':
			return 'it did not answer in time';
		case 'ECONNRESET':
		case 'EPIPE':
		case 'UND_ERR_SOCKET':
			return 'the connection was closed';
		case 'CERT_HAS_EXPIRED':
		case 'DEPTH_ZERO_SELF_SIGNED_CERT':
		case 'SELF_SIGNED_CERT_IN_CHAIN':
		case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
			return 'its HTTPS certificate is not trusted';
		default:
			return 'no answer came back';
	}
}
