/**
 * Base URL handling. Users are given the main API base already ending in `/api/v1`;
 * some type the bare host. Both, with or without a trailing slash, mean the same
 * (normalised in credentials/ClinicNetwork.ts, which the credentials use too).
 */

/** True when the text starts with a scheme such as `https://`. */
function hasScheme(value: string): boolean {
	return /^[a-z][a-z0-9+.-]*:\/\//i.test(value);
}

/**
 * Checks a base URL a user typed, returning a message that says what to fix, or undefined.
 * `api.example.com` (no scheme) gets its own message: `new URL` would only say "Invalid URL".
 */
export function describeBaseUrlProblem(url: string, fieldName: string): string | undefined {
	const value = (url ?? '').trim();
	if (!value) return `${fieldName} is empty: enter the address you were given, e.g. https://api.example.com/api/v1`;
	if (!hasScheme(value)) {
		return `${fieldName} "${value}" has no https:// at the start: enter it as https://${value.replace(/^\/+/, '')}`;
	}
	let parsed: URL;
	try {
		parsed = new URL(value);
	} catch {
		return `${fieldName} "${value}" is not a valid address: enter it as https://host/path, e.g. https://api.example.com/api/v1`;
	}
	if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
		return `${fieldName} must start with https:// (or http:// for a local test server)`;
	}
	return undefined;
}

/** The credential field the Clinic Trigger cannot work without, named as the credential names it. */
export const WEBHOOK_SERVICE_URL_FIELD = 'Webhook Service Base URL';

/** What to say when the credential has no webhook service address. */
export function missingWebhookServiceUrlMessage(): { message: string; description: string } {
	return {
		message: `The Clinic credential has no ${WEBHOOK_SERVICE_URL_FIELD}`,
		description: `Webhook subscriptions, events and the Clinic Trigger live on the webhook service, a separate host from the API (e.g. https://webhooks.example.com). Add its address as "${WEBHOOK_SERVICE_URL_FIELD}" in the credential.`,
	};
}

/**
 * What to say when n8n's webhook address for the trigger is not https. The message itself
 * names both fixes: n8n shows only the message in the "Listen for test event" toast.
 */
export function insecureWebhookAddressMessage(address: string): { message: string; description: string } {
	return {
		message: `The clinic service sends events only to https:// addresses, and n8n gave this trigger ${address}: set n8n's WEBHOOK_URL to a public https:// address, or for a local test turn on Options > Allow Insecure URL`,
		description:
			"WEBHOOK_URL is the environment variable with the public address of this n8n (for example through a reverse proxy or a tunnel); restart n8n after setting it. \"Allow Insecure URL\" registers the http:// address as it is: only a local test service (such as the clinic simulator) accepts it.",
	};
}

/**
 * Two addresses that name the same place: a service may store an address normalised
 * (a trailing slash, the query in another order, the host in capitals).
 */
export function sameUrl(a: string, b: string): boolean {
	const normal = (value: string) => {
		try {
			const url = new URL(value);
			url.searchParams.sort();
			url.pathname = url.pathname.replace(/\/+$/, '');
			return url.toString();
		} catch {
			return value;
		}
	};
	return a === b || normal(a) === normal(b);
}

// ---- callback addresses of the Clinic Trigger ----------------------------------------

/** Query parameter of the callback URL that names the event (the body does not). */
export const EVENT_QUERY_PARAMETER = 'event';

/** The address registered for one event: the node's webhook URL with `?event=<key>`. */
export function callbackUrl(webhookUrl: string, eventKey: string): string {
	const url = new URL(webhookUrl);
	url.searchParams.set(EVENT_QUERY_PARAMETER, eventKey);
	return url.toString();
}

/** Origin and path of an address, without query or fragment; '' when it is not a URL. */
export function addressOf(url: string | undefined): string {
	if (!url) return '';
	try {
		const parsed = new URL(url);
		return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
	} catch {
		return '';
	}
}

/** Path of an address ('' when it is not a URL): the same for one node whatever host n8n is reached by. */
export function pathOf(url: string | undefined): string {
	if (!url) return '';
	try {
		return new URL(url).pathname.replace(/\/+$/, '');
	} catch {
		return '';
	}
}

/** The event key a callback address names, or ''. */
export function eventKeyOfUrl(url: string | undefined): string {
	if (!url) return '';
	try {
		return new URL(url).searchParams.get(EVENT_QUERY_PARAMETER) ?? '';
	} catch {
		return '';
	}
}

export function isSecureUrl(url: string): boolean {
	try {
		return new URL(url).protocol === 'https:';
	} catch {
		return false;
	}
}
