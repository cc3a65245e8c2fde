/**
 * The simulator's state, shared by the handlers of both hosts and the control surface.
 */
import { Auth } from './auth';
import { EventBus, assertCatalogEvent } from './deliveries';
import { Faults } from './faults';
import { ORGANIZATION_ID, createStore, finishNewConsultation, patientEventValue, seedSignedInvoices, type Store } from './store';
import type {
	DeliveryBodyShape,
	DuplicateMode,
	EventOrder,
	EventParamsMode,
	EventRecord,
	RateLimit,
	RequestLogEntry,
	SimulatorOptions,
	TokenRequestCounts,
} from './types';

export type ResolvedOptions = Required<SimulatorOptions>;

export function resolveOptions(options: SimulatorOptions = {}): ResolvedOptions {
	return {
		apiPort: options.apiPort ?? 0,
		webhooksPort: options.webhooksPort ?? 0,
		host: options.host ?? '127.0.0.1',
		tokenLifetimeSeconds: options.tokenLifetimeSeconds ?? 86400,
		topicPrefix: options.topicPrefix ?? 'clinic-38729',
		allowHttpCallbacks: options.allowHttpCallbacks ?? false,
		cfdiTokenParam: options.cfdiTokenParam ?? 'token',
		latencyMs: options.latencyMs ?? 0,
		deliveryRetryDelayMs: options.deliveryRetryDelayMs ?? 200,
		deliveryTimeoutMs: options.deliveryTimeoutMs ?? 5000,
		logLimit: options.logLimit ?? 10000,
		reuseRevokesChain: options.reuseRevokesChain ?? false,
		callbackProxy: options.callbackProxy ?? null,
		deliveryBody: options.deliveryBody ?? 'value',
		timestamps: options.timestamps ?? 'utc',
	};
}

export class SimState {
	store: Store = createStore();
	readonly auth: Auth;
	readonly bus: EventBus;
	latencyMs: number;
	rateLimit: RateLimit | null = null;
	readonly faults = new Faults();
	private rateCounter = 0;
	/** When the accepted requests of the last second arrived (requestsPerSecond). */
	private acceptedTimes: number[] = [];
	private acceptedInFlight = 0;
	private inFlightNow = 0;
	private inFlightPeak = 0;
	/** Holds up to twice logLimit entries, trimmed in one go (amortised O(1) per request). */
	private logBuffer: RequestLogEntry[] = [];
	private seq = 0;
	tokenCounts = { password: 0, refresh_token: 0, other: 0 };
	readonly internalErrors: string[] = [];
	eventParams: EventParamsMode = 'body';
	eventOrder: EventOrder = 'oldest-first';
	/** The most events a GET /events page holds, below the contract's own cap (a service that pages small). */
	eventsPageCap: number | undefined = undefined;
	afterEventsPage: ((page: EventRecord[]) => void) | null = null;

	constructor(readonly options: ResolvedOptions) {
		this.auth = new Auth(options.tokenLifetimeSeconds);
		this.auth.reuseRevokesChain = options.reuseRevokesChain;
		this.latencyMs = options.latencyMs;
		this.bus = new EventBus({
			topicPrefix: options.topicPrefix,
			organizationId: ORGANIZATION_ID,
			retryDelayMs: options.deliveryRetryDelayMs,
			timeoutMs: options.deliveryTimeoutMs,
			callbackProxy: options.callbackProxy,
			timestamps: options.timestamps,
		});
		this.bus.deliveryBody = options.deliveryBody;
	}

	/** Records an event from a change made through the API; deliveries run in the background. */
	emit(suffix: string, name: string, value: unknown): void {
		assertCatalogEvent(suffix, name);
		this.bus.emit(suffix, name, value);
	}

	/** Records an event and resolves with its record once its deliveries are done. */
	async emitAndSettle(suffix: string, name: string, value: unknown): Promise<EventRecord> {
		const { record, settled } = this.bus.emit(suffix, name, value);
		await settled;
		return record;
	}

	seedEvents(count: number, suffix = 'patient', name = 'patient-updated', valueOf?: (index: number) => unknown): void {
		if (!Number.isInteger(count) || count < 0) throw new Error('count must be a non-negative integer');
		const people = [...this.store.people.values()].map(patientEventValue);
		this.bus.seed(count, suffix, name, valueOf ?? ((i) => ({ ...people[i % people.length] })));
	}

	/** A new finished consultation with a chargeable invoice, and its consultation-finished event delivered. */
	async finishConsultation(): Promise<EventRecord> {
		const finished = finishNewConsultation(this.store);
		return await this.emitAndSettle('consultation', 'consultation-finished', {
			id: finished.id,
			encounter_id: finished.encounter_id,
			person_id: finished.person_id,
		});
	}

	seedInvoices(count: number): number[] {
		if (!Number.isInteger(count) || count < 0) throw new Error('count must be a non-negative integer');
		return seedSignedInvoices(this.store, count);
	}

	/**
	 * Called as a spec request arrives: the Retry-After seconds of its 429 if the rate limit
	 * refuses it, else undefined (the request then counts as accepted until `requestEnded`).
	 */
	requestStarted(now = Date.now()): number | undefined {
		this.inFlightNow++;
		this.inFlightPeak = Math.max(this.inFlightPeak, this.inFlightNow);
		const limit = this.rateLimit;
		if (!limit) return undefined;
		this.rateCounter++;
		let refusedFor: number | undefined;
		if (limit.every && this.rateCounter % limit.every === 0) refusedFor = limit.retryAfterSeconds ?? 1;
		if (refusedFor === undefined && limit.maxInFlight && this.acceptedInFlight >= limit.maxInFlight) {
			refusedFor = limit.retryAfterSeconds ?? 1;
		}
		if (refusedFor === undefined && limit.requestsPerSecond) {
			while (this.acceptedTimes.length > 0 && this.acceptedTimes[0] <= now - 1000) this.acceptedTimes.shift();
			if (this.acceptedTimes.length >= limit.requestsPerSecond) {
				const freeInMs = this.acceptedTimes[0] + 1000 - now;
				refusedFor = limit.retryAfterSeconds ?? Math.max(1, Math.ceil(freeInMs / 1000));
			} else {
				this.acceptedTimes.push(now);
			}
		}
		if (refusedFor === undefined) this.acceptedInFlight++;
		return refusedFor;
	}

	/** The answer of a spec request is out; `accepted`: it was not refused by the rate limit. */
	requestEnded(accepted: boolean): void {
		this.inFlightNow--;
		if (accepted && this.rateLimit) this.acceptedInFlight = Math.max(0, this.acceptedInFlight - 1);
	}

	inFlight(): { now: number; peak: number } {
		return { now: this.inFlightNow, peak: this.inFlightPeak };
	}

	setRateLimit(limit: RateLimit | null): void {
		if (limit) {
			const positive = (value: number | undefined) => value === undefined || (Number.isInteger(value) && value >= 1);
			if (
				!positive(limit.every) ||
				!positive(limit.requestsPerSecond) ||
				!positive(limit.maxInFlight) ||
				!(limit.every || limit.requestsPerSecond || limit.maxInFlight) ||
				!(limit.retryAfterSeconds === undefined || limit.retryAfterSeconds >= 0)
			) {
				throw new Error(
					'rate limit needs at least one of every, requestsPerSecond, maxInFlight (integers >= 1) and retryAfterSeconds >= 0 if given',
				);
			}
		}
		this.rateLimit = limit
			? Object.fromEntries(
					(['every', 'requestsPerSecond', 'maxInFlight', 'retryAfterSeconds'] as const)
						.filter((key) => limit[key] !== undefined)
						.map((key) => [key, limit[key]]),
				)
			: null;
		this.rateCounter = 0;
		this.acceptedTimes = [];
		this.acceptedInFlight = 0;
	}

	setEventParams(mode: EventParamsMode): void {
		if (mode !== 'body' && mode !== 'query' && mode !== 'both') {
			throw new Error(`event parameter mode must be body, query or both, not ${String(mode)}`);
		}
		this.eventParams = mode;
	}

	setEventOrder(order: EventOrder): void {
		if (order !== 'oldest-first' && order !== 'newest-first') {
			throw new Error(`event order must be oldest-first or newest-first, not ${String(order)}`);
		}
		this.eventOrder = order;
	}

	setDeliveryBody(shape: DeliveryBodyShape): void {
		if (shape !== 'value' && shape !== 'top-level') throw new Error(`delivery body must be value or top-level, not ${String(shape)}`);
		this.bus.deliveryBody = shape;
	}

	setDuplicates(mode: DuplicateMode): void {
		if (mode !== 'off' && mode !== 'sequential' && mode !== 'concurrent') {
			throw new Error(`duplicate mode must be off, sequential or concurrent, not ${String(mode)}`);
		}
		this.bus.duplicates = mode;
	}

	/** The last logLimit entries, oldest first. */
	get log(): RequestLogEntry[] {
		const limit = this.options.logLimit;
		if (limit <= 0) return [];
		if (this.logBuffer.length > limit) this.logBuffer = this.logBuffer.slice(-limit);
		return this.logBuffer;
	}

	addLog(entry: Omit<RequestLogEntry, 'seq'>): void {
		if (this.options.logLimit <= 0) return;
		this.logBuffer.push({ seq: ++this.seq, ...entry });
		if (this.logBuffer.length >= 2 * this.options.logLimit) this.logBuffer = this.logBuffer.slice(-this.options.logLimit);
	}

	clearLog(): void {
		this.logBuffer = [];
		this.inFlightPeak = this.inFlightNow;
		this.tokenCounts = { password: 0, refresh_token: 0, other: 0 };
		this.auth.refusedReuses = 0;
	}

	tokenRequests(grant?: 'password' | 'refresh_token'): number {
		if (grant) return this.tokenCounts[grant];
		return this.tokenCounts.password + this.tokenCounts.refresh_token + this.tokenCounts.other;
	}

	tokenRequestCounts(): TokenRequestCounts {
		return {
			total: this.tokenRequests(),
			password: this.tokenCounts.password,
			refresh_token: this.tokenCounts.refresh_token,
			refused_reuse: this.auth.refusedReuses,
		};
	}

	reset(): void {
		this.store = createStore();
		this.bus.reset();
		this.bus.deliveryBody = this.options.deliveryBody;
		this.clearLog();
		this.latencyMs = this.options.latencyMs;
		this.auth.lifetimeSeconds = this.options.tokenLifetimeSeconds;
		this.auth.reuseRevokesChain = this.options.reuseRevokesChain;
		this.setRateLimit(null);
		this.faults.clear();
		this.eventParams = 'body';
		this.eventOrder = 'oldest-first';
		this.eventsPageCap = undefined;
		this.afterEventsPage = null;
	}
}
