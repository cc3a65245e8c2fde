/** Checks that a delivery comes from the clinic service (constant-time, on the raw bytes), and derives the secrets. */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type VerificationMode = 'hmacSha256' | 'secretEquals' | 'none';

/** Header the service puts the signature in; matched in any letter case. */
export const DEFAULT_SIGNATURE_HEADER = 'signature';

/** Compares two strings in constant time: both are hashed first, so the secret's length does not leak either. */
export function constantTimeEquals(expected: string, received: string): boolean {
	const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
	return timingSafeEqual(digest(expected), digest(received));
}

/** A request header by name, in any letter case (Node lower-cases them); a repeated one by its first value. */
export function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
	const value = Object.entries(headers).find(([key]) => key.toLowerCase() === name.trim().toLowerCase())?.[1];
	return Array.isArray(value) ? value[0] : value;
}

/** Verifies one delivery as the chosen mode says: `headerName` (default `signature`) in any letter case, `secret` undefined when none is stored. */
export function verifyDelivery(input: { mode: VerificationMode; rawBody: Buffer; headers: Record<string, string | string[] | undefined>; headerName?: string; secret: string | undefined }): boolean {
	if (input.mode === 'none') return true;
	if (!input.secret) return false;
	const received = headerValue(input.headers, input.headerName || DEFAULT_SIGNATURE_HEADER)?.trim();
	if (!received) return false;
	// The secret itself, or the hex HMAC-SHA256 of the bytes keyed with the secret, in any letter case.
	return input.mode === 'secretEquals' ? constantTimeEquals(input.secret, received) : constantTimeEquals(createHmac('sha256', input.secret).update(input.rawBody).digest('hex'), received.toLowerCase());
}

/** Names a delivery's content in every process; a retry and another event with that payload share it, so it is no value to dedupe on (`eventId` is). */
export function deliveryIdOf(eventKey: string, rawBody: Buffer): string {
	return createHash('sha256').update(eventKey, 'utf8').update('\n').update(rawBody).digest('hex');
}

/** A subscription's secret, from the credential's signing key, the node's webhook id and the event: the workflow (which n8n 1.x copies into every execution) holds no secret, and every n8n process derives the same one, so two mains activating at once adopt each other's. */
export function subscriptionSecret(signingKey: string, triggerId: string, eventKey: string): string {
	return createHmac('sha256', signingKey).update(`clinic-trigger-subscription\n${triggerId}\n${eventKey}`).digest('hex');
}

/** Names a signing key without revealing it: tells which key a subscription's secret came from. */
export function signingKeyId(signingKey: string): string {
	return createHmac('sha256', signingKey).update('clinic-trigger-key-id').digest('hex').slice(0, 16);
}
