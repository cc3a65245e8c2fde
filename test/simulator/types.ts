/**
 * Public types of the simulator. Other test suites, the benchmarks and the n8n
 * end-to-end tests code against these names: change them only together.
 */
import type { RefreshTokenStatus } from './auth';
import type { Store } from './store';

export type { RefreshTokenStatus } from './auth';

export interface SimulatorOptions {
	/** Main API host port; 0 (default) picks a free one. */
	apiPort?: number;
	/** Webhook service host port; 0 (default) picks a free one. */
	webhooksPort?: number;
	/** Interface both hosts listen on; default 127.0.0.1. */
	host?: string;
	/** `expires_in` of newly issued access tokens; default 86400. */
	tokenLifetimeSeconds?: number;
	/** The organisation's topic prefix; default 'clinic-38729'. */
	topicPrefix?: string;
	/**
	 * Default false: POST /webhooks refuses every non-https callback URL (422).
	 * When true, http:// is accepted for loopback hosts only.
	 */
	allowHttpCallbacks?: boolean;
	/** Query parameter that carries the token on CFDI downloads; default 'token'. */
	cfdiTokenParam?: string;
	/** Added before answering every spec request (not /__sim/); default 0. */
	latencyMs?: number;
	/** Wait before retrying a failed delivery; default 200. */
	deliveryRetryDelayMs?: number;
	/** A delivery attempt without an answer after this long counts as failed; default 5000. */
	deliveryTimeoutMs?: number;
	/** Request-log ring size; default 10000. */
	logLimit?: number;
	/**
	 * Default false (Doorkeeper's default): reusing a used refresh token is refused.
	 * When true, such a reuse also revokes every token of its chain, the newest included.
	 */
	reuseRevokesChain?: boolean;
	/**
	 * Deliveries to callback URLs starting with `from` go to `to` instead (the rest of the
	 * URL kept, `x-forwarded-proto` and `x-forwarded-host` naming the public address), as a
	 * reverse proxy in front of n8n forwards them: n8n is subscribed at its public https
	 * address and reached at its local one. The delivery log keeps the subscribed URL.
	 */
	callbackProxy?: { from: string; to: string } | null;
	/** How a delivery's body carries the event: `{"value": ...}` (default) or the payload object itself. */
	deliveryBody?: DeliveryBodyShape;
	/**
	 * How the webhook service renders times: `utc` (default, `toISOString`) or `mexico`, as a
	 * Rails service in Mexico City does: events with a `-06:00` offset and milliseconds,
	 * subscriptions in UTC without fractions. The same instants, in other words.
	 */
	timestamps?: TimestampStyle;
}

export type TimestampStyle = 'utc' | 'mexico';

/**
 * The spec allows both: payloads "may be wrapped in a value object or be top-level
 * identifier objects". `top-level` sends an object payload as the body itself (other
 * payloads stay wrapped).
 */
export type DeliveryBodyShape = 'value' | 'top-level';

/** Token requests since start or clearLog. */
export interface TokenRequestCounts {
	total: number;
	password: number;
	refresh_token: number;
	/** Refresh grants refused because the refresh token had been used already. */
	refused_reuse: number;
}

export type HostName = 'api' | 'webhooks';
export type TokenPlacement = 'header' | 'body' | 'query';
export type TokenKind = 'integration' | 'portal' | 'invalid' | 'none';

export interface RequestLogEntry {
	seq: number;
	host: HostName;
	method: string;
	/** Path without the query string. */
	path: string;
	/** Token values replaced by '<token>'. */
	query: Record<string, string>;
	/** Parsed JSON or form object (null without a body); token values replaced by '<token>', passwords by '<redacted>'. */
	body: unknown;
	/** Where an access or portal token was found in this request. */
	tokenPlacement: TokenPlacement[];
	/**
	 * What the token(s) found were when the request arrived. When several were found
	 * and they differ in kind, 'invalid'.
	 */
	tokenKind: TokenKind;
	status: number;
	/** The fault that met this request, if any (a stalled request is logged as it is held, status 0). */
	fault?: FaultKind;
}

export type SubscriptionStatus = 'enabled' | 'disabled';

export interface Subscription {
	id: number;
	organization_id: number;
	url: string;
	event_topic: string;
	event_name: string;
	authentication_data: { secret: string };
	status: SubscriptionStatus;
	created_at: string;
	deleted_at: string | null;
}

export interface DeliveryLog {
	id: number;
	target_url: string;
	authentication_data: { secret: string };
	/** The exact body sent. */
	request: string;
	/** The receiver's answer body, or the connection error when there was no answer. */
	response: string;
	event_id: string;
	/** null when no response arrived. */
	response_code: number | null;
	retries_left: number;
	created_at: string;
}

export interface EventRecord {
	id: number;
	topic: string;
	name: string;
	source: string;
	behaviour: string;
	compensating_event: Record<string, unknown>;
	previous_event: string;
	root_event: string;
	event_schema_version: string;
	value: unknown;
	key: string;
	domain: string;
	organization_id: number;
	tries_left: number;
	created_at: string;
	logs: DeliveryLog[];
}

export type DuplicateMode = 'off' | 'sequential' | 'concurrent';

/**
 * Where one event's delivery to one subscription stands: `pending` (an attempt or a retry
 * is still to come), `delivered` (a 2xx answer, and the repeated copy of a duplicate mode
 * sent), `exhausted` (no 2xx and no retry left), `stopped` (the subscription was deleted
 * or the simulator closed before it ended).
 */
export type DeliveryOutcome = 'pending' | 'delivered' | 'exhausted' | 'stopped';

export interface DeliveryStatus {
	subscription_id: number;
	target_url: string;
	outcome: DeliveryOutcome;
	/** Attempts made so far, repeated copies included (each is a log entry on the event). */
	attempts: number;
	/** Retries not sent yet (as `retries_left` of the latest attempt's log entry; 3 before the first). */
	retries_left: number;
	/**
	 * While pending: the latest moment an attempt of this delivery can still start or be
	 * answered, from the retry schedule (every retry left waiting its delay and timing
	 * out). null once settled.
	 */
	last_attempt_by: string | null;
}

/** One event's deliveries; `settled` once none is pending (no attempt of it can come any more). */
export interface EventDeliveries {
	event_id: number;
	settled: boolean;
	deliveries: DeliveryStatus[];
}
/** Where GET /events reads offset, limit, topic and name: the spec's JSON body (default), the query string, or both (body wins). */
export type EventParamsMode = 'body' | 'query' | 'both';
/** How GET /events lists events; the spec does not say. Default oldest first (by id). */
export type EventOrder = 'oldest-first' | 'newest-first';

/**
 * When spec requests (both hosts together) answer 429 Too Many Requests with Retry-After.
 * Any combination; at least one of `every`, `requestsPerSecond`, `maxInFlight`.
 */
export interface RateLimit {
	/** Every Nth spec request (counted since the limit was set) answers 429. */
	every?: number;
	/** More than this many accepted requests within the last second: 429 (refused ones do not count). */
	requestsPerSecond?: number;
	/** A request arriving while this many accepted ones are being answered: 429. */
	maxInFlight?: number;
	/** Retry-After sent; default: for `requestsPerSecond` the whole seconds until a request fits, else 1. */
	retryAfterSeconds?: number;
}

export type FaultKind = 'stall' | 'reset' | 'status' | 'ignore-offset';

/**
 * A way the service misbehaves (see faults.ts), for spec requests matching `host`,
 * `method` and `path` (each optional). Off unless set; the first matching fault applies.
 */
export interface Fault {
	kind: FaultKind;
	host?: HostName;
	method?: string;
	/** Exact path as sent (e.g. '/api/v1/consultations/1', '/events'); `*` matches anything; or a RegExp. */
	path?: string | RegExp;
	/** The next `count` matching requests; default every matching request until cleared. */
	count?: number;
	/** kind 'status': the status answered; default 503. */
	status?: number;
	/** kind 'status': Retry-After sent; none when absent. */
	retryAfterSeconds?: number;
	/** kind 'stall': answer normally after this long; default never (the connection is closed on clear or close). */
	ms?: number;
}

export interface FaultStatus extends Fault {
	id: number;
	/** Matching requests met so far. */
	hits: number;
	/** Matching requests it still applies to; null: until cleared. */
	remaining: number | null;
}

export interface Account {
	username: string;
	password: string;
}

export interface PortalDemo {
	countryCode: string;
	phone: string;
	code: string;
}

export interface Simulator {
	/** http://127.0.0.1:PORT/api/v1 */
	apiBaseUrl: string;
	/** http://127.0.0.1:PORT */
	apiOrigin: string;
	/** http://127.0.0.1:PORT2 (no prefix) */
	webhooksBaseUrl: string;
	topicPrefix: string;
	/** 'demo@clinic.test' / 'demo-password' */
	demo: Account;
	/** '2fa@clinic.test' / 'demo-password': the password grant answers 403 {token_type: '2fa'}. */
	twoFactor: Account;
	/** '52' / '5512345678' / '246810' */
	portalDemo: PortalDemo;
	/** The request log (spec requests only, oldest first, bounded by logLimit). */
	readonly log: RequestLogEntry[];
	/** Empties the log and the token-request counters. */
	clearLog(): void;
	/** POST /oauth/token requests that reached the endpoint since start or clearLog (429s excluded). */
	tokenRequests(grant?: 'password' | 'refresh_token'): number;
	/** The same counters at once, plus refused reuses of used refresh tokens. */
	tokenRequestCounts(): TokenRequestCounts;
	/** Whether a refresh token is live and the newest of its chain (for assertions). */
	refreshTokenStatus(refreshToken: string): RefreshTokenStatus;
	/** See SimulatorOptions.reuseRevokesChain. */
	setReuseRevokesChain(on: boolean): void;
	/** What a user gets after finishing 2FA in the web app. */
	issueRefreshToken(username: string): string;
	/** Every access, refresh and portal token issued so far (for leak checks). */
	issuedTokens(): string[];
	/** Revokes every integration access AND refresh token. */
	revokeAllTokens(): void;
	/** Revokes every integration access token issued so far (refresh tokens stay valid). */
	revokeAccessTokens(): void;
	/** Expires every integration access token issued so far (refresh tokens stay valid). */
	expireAccessTokens(): void;
	/** expires_in of tokens issued from now on. */
	setTokenLifetime(seconds: number): void;
	setLatency(ms: number): void;
	setRateLimit(opts: RateLimit | null): void;
	/** Adds a fault (faults.ts); returns its id. Throws on a malformed one. */
	addFault(fault: Fault): number;
	/** Removes every fault; requests held by a stall lose their connection without an answer. */
	clearFaults(): void;
	/** Faults not used up yet, with their hits; `hits`: every request a fault met since start or clearFaults. */
	faults(): { faults: FaultStatus[]; hits: number; held: number };
	/** Spec requests being answered now, and the most at once since start, clearLog or reset. */
	inFlight(): { now: number; peak: number };
	setDuplicateDeliveries(mode: DuplicateMode): void;
	/** How deliveries carry the event from now on (default 'value'). */
	setDeliveryBody(shape: DeliveryBodyShape): void;
	/** Where GET /events reads its parameters (default 'body', as the spec declares). */
	setEventParams(mode: EventParamsMode): void;
	/** Order of GET /events (default 'oldest-first'). */
	setEventOrder(order: EventOrder): void;
	/** At most this many events a GET /events page (a service that pages small); undefined: the contract's cap. */
	setEventsPageCap(cap: number | undefined): void;
	/**
	 * Called after each GET /events page is computed and before it is answered (in process
	 * only): tests insert events "between two page requests" here. null removes it.
	 */
	onEventsPage(hook: ((page: EventRecord[]) => void) | null): void;
	/**
	 * Records an event (topic = prefix + '.' + suffix) and delivers it to the live
	 * subscriptions matching topic and event name. Resolves with the record once this
	 * event's deliveries, retries and duplicates are done. Throws on names not in the catalog.
	 */
	emit(topicSuffix: string, eventName: string, value: unknown): Promise<EventRecord>;
	/**
	 * An event whose transaction commits late: its id is taken now, and it shows in the log (among
	 * events with higher ids) and is delivered `commitAfterMs` later. `record` resolves when its deliveries are done.
	 */
	emitLate(topicSuffix: string, eventName: string, value: unknown, commitAfterMs: number): { id: number; record: Promise<EventRecord> };
	/** A new finished consultation with a chargeable invoice of its own, and its consultation-finished event emitted (`POST /_sim/finish-consultation`). */
	finishConsultation(): Promise<EventRecord>;
	/**
	 * Bulk events in the event log without deliveries; default topic 'patient', event
	 * 'patient-updated', values the seed people's (or `valueOf(i)` for the i-th event).
	 */
	seedEvents(count: number, topicSuffix?: string, eventName?: string, valueOf?: (index: number) => unknown): void;
	/** Creates signed invoices (each with its encounter and one charge); returns their ids. */
	seedInvoices(count: number): number[];
	/** Resolves when no delivery or retry is pending. */
	deliveriesSettled(): Promise<void>;
	/** Where the deliveries of one event stand; undefined for an unknown event id. */
	deliveryStatus(eventId: number): EventDeliveries | undefined;
	/**
	 * Resolves once no attempt of this event's deliveries can come any more (each got a 2xx
	 * answer, used up its retries or was stopped), with their status; rejects for an
	 * unknown event id.
	 */
	eventDeliveriesSettled(eventId: number): Promise<EventDeliveries>;
	/** All subscriptions, deleted ones included. */
	subscriptions(): Subscription[];
	/** The service disables (`status: disabled`) or deletes (also `deleted_at`) a subscription; false when not live. */
	stopSubscription(id: number, how: 'disable' | 'delete'): boolean;
	events(): EventRecord[];
	/** The store (people, consultations, invoices, ...) for assertions. Replaced by reset(). */
	readonly data: Store;
	/** Back to seed data: no subscriptions, no events, empty log, settings as started. Tokens stay valid. */
	reset(): void;
	/** Unexpected exceptions inside handlers (answered 500), newest last. */
	internalErrors(): string[];
	close(): Promise<void>;
}
