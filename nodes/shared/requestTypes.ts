/** What a request to the clinic service is, what comes back, and how the client is set up. */
import type { ICredentialDataDecryptedObject, IDataObject, IHttpRequestMethods } from 'n8n-workflow';

import type { TokenPlacement } from '../../credentials/ClinicTokenPlacement';

export interface ClinicRequest {
	/** Main API (base ends in /api/v1) or the separate webhook service. */
	host?: 'api' | 'webhooks';
	method: IHttpRequestMethods;
	/** Path relative to the host's base, e.g. `/people/12`. */
	path: string;
	qs?: IDataObject;
	body?: IDataObject;
	/** Who signs the request: the integration credential, the portal token, or nobody. */
	auth: 'integration' | 'portal' | 'none';
	/** A portal token and base URL given as parameters (auth 'portal'), instead of the portal credential. */
	portal?: { token: string; baseUrl: string };
	/** Answer as bytes (file downloads). */
	binary?: boolean;
	/** What the request is about, for error messages: "Invoice 42". */
	subject?: string;
	/** Where the token travels when the usual rule does not say: the CFDI downloads' query. */
	tokenPlacement?: TokenPlacement;
	/** Send `body` on a GET too (GET /events takes its parameters in a JSON body). */
	bodyOnGet?: boolean;
}

export interface ClinicResponse<T = unknown> {
	statusCode: number;
	headers: Record<string, string | string[] | undefined>;
	body: T;
}

/** How an attempt ended, for the gate: an HTTP status, or none (network failure, timeout). */
export interface AttemptOutcome {
	status?: number;
	timedOut?: boolean;
	/** The service asked that nothing be sent to the host for this long. */
	retryAfterMs?: number;
}

/** When an attempt may go out. `acquire` resolves with what to call once it has ended. */
export interface RequestGate {
	acquire(itemIndex: number, host: string, retry: boolean): Promise<(outcome: AttemptOutcome) => void>;
	/** How long the gate holds every request to the host (a Retry-After another request met). */
	pausedMs(host: string): number;
}

export interface ClientOptions {
	/** Base URL for public operations run without a credential. */
	publicBaseUrl?: string;
	/** When each attempt may go out; without one, at once (a Retry-After is waited out here). */
	gate?: RequestGate;
	/** Every request, on every path, fails after this long without an answer. */
	timeoutMs?: number;
	/** The most a request waits in all on Retry-After answers before failing. */
	maxRetryWaitMs?: number;
	/** What the user runs, for error messages: "Consultation → Get". */
	operation?: string;
	/** Reads the credential instead of n8n's getCredentials (the Clinic Trigger shares reads). */
	readCredentials?: (type: string) => Promise<ICredentialDataDecryptedObject>;
}
