/**
 * The webhook service's memory: subscriptions, the event log, and deliveries.
 *
 * A delivery is a POST of exactly `{"value": <payload>}` (the same bytes for every
 * attempt and copy of one event) with a `signature` header holding the hex
 * HMAC-SHA256 of those bytes keyed with the subscription's secret. A non-2xx answer
 * or no answer is retried up to MAX_RETRIES times; every attempt is logged on the
 * event. Duplicate modes repeat deliveries the way the real service may.
 */
import { createHmac, randomUUID } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';

import { TOPICS, findTopic, fullTopic } from '../../nodes/shared/catalog';
import { nowIso } from './store';
import type {
	DeliveryBodyShape,
	DeliveryLog,
	DeliveryStatus,
	DuplicateMode,
	EventDeliveries,
	EventRecord,
	Subscription,
	TimestampStyle,
} from './types';

export const MAX_RETRIES = 3;
const RESPONSE_KEEP = 2000;

/** Checks a (suffix, event name) pair against the catalog; throws when it is not one. */
export function assertCatalogEvent(suffix: string, name: string): void {
	const topic = findTopic(suffix);
	if (!topic) {
		throw new Error(`Unknown topic suffix "${suffix}"; known: ${TOPICS.map((t) => t.suffix).join(', ')}`);
	}
	if (!topic.events.includes(name)) {
		throw new Error(`Topic "${suffix}" has no event "${name}"; its events: ${topic.events.join(', ')}`);
	}
}

export function sign(secret: string, body: Buffer): string {
	return createHmac('sha256', secret).update(body).digest('hex');
}

interface AttemptResult {
	ok: boolean;
}

export interface BusOptions {
	topicPrefix: string;
	organizationId: number;
	retryDelayMs: number;
	timeoutMs: number;
	callbackProxy: { from: string; to: string } | null;
	timestamps?: TimestampStyle;
}

/** An instant as the webhook service renders it for events or subscriptions (see `timestamps`). */
export function renderTime(at: Date, style: TimestampStyle | undefined, of: 'event' | 'subscription'): string {
	if (style !== 'mexico') return at.toISOString();
	if (of === 'subscription') return `${at.toISOString().slice(0, 19)}Z`;
	const local = new Date(at.getTime() - 6 * 60 * 60_000);
	return `${local.toISOString().slice(0, 23)}-06:00`;
}

export class EventBus {
	events: EventRecord[] = [];
	subscriptions: Subscription[] = [];
	duplicates: DuplicateMode = 'off';
	deliveryBody: DeliveryBodyShape = 'value';
	private nextEventId = 1;
	private nextSubscriptionId = 1001;
	private nextLogId = 1;
	private readonly pending = new Set<Promise<void>>();
	/** Per event with deliveries: each delivery's status and a promise settled when all are over. */
	private readonly progress = new Map<number, { statuses: DeliveryStatus[]; settled: Promise<void> }>();
	/** Retry delays under way: each one's wake-up, and the subscription it waits for. */
	private readonly timers = new Map<NodeJS.Timeout, { wake: () => void; subscriptionId: number }>();
	private readonly inFlight = new Set<http.ClientRequest>();
	private closed = false;
	private readonly httpAgent = new http.Agent({ keepAlive: false });
	private readonly httpsAgent = new https.Agent({ keepAlive: false, rejectUnauthorized: false });

	constructor(private readonly options: BusOptions) {}

	reset(): void {
		this.events = [];
		this.subscriptions = [];
		this.progress.clear();
		this.duplicates = 'off';
		this.nextEventId = 1;
		this.nextSubscriptionId = 1001;
		this.nextLogId = 1;
	}

	subscribe(fields: { url: string; topic: string; eventName: string; secret: string }): Subscription {
		const subscription: Subscription = {
			id: this.nextSubscriptionId++,
			organization_id: this.options.organizationId,
			url: fields.url,
			event_topic: fields.topic,
			event_name: fields.eventName,
			authentication_data: { secret: fields.secret },
			status: 'enabled',
			created_at: renderTime(new Date(), this.options.timestamps, 'subscription'),
			deleted_at: null,
		};
		this.subscriptions.push(subscription);
		return subscription;
	}

	/** Disables a live subscription; false when unknown or already deleted. */
	unsubscribe(id: number): boolean {
		const subscription = this.subscriptions.find((s) => s.id === id);
		if (!subscription || subscription.deleted_at !== null) return false;
		subscription.status = 'disabled';
		subscription.deleted_at = nowIso();
		this.wakeRetries(id);
		return true;
	}

	/**
	 * What the service does on its side (the spec's `status` and `deleted_at`): `disable` sets
	 * status disabled, `delete` also sets deleted_at. Either stops deliveries. False when
	 * unknown or already deleted.
	 */
	stop(id: number, how: 'disable' | 'delete'): boolean {
		const subscription = this.subscriptions.find((s) => s.id === id);
		if (!subscription || subscription.deleted_at !== null) return false;
		subscription.status = 'disabled';
		if (how === 'delete') subscription.deleted_at = nowIso();
		this.wakeRetries(id);
		return true;
	}

	/** A stopped subscription's waiting retries end now (they find it stopped and make no attempt). */
	private wakeRetries(subscriptionId: number): void {
		for (const [timer, sleeper] of this.timers) {
			if (sleeper.subscriptionId !== subscriptionId) continue;
			clearTimeout(timer);
			this.timers.delete(timer);
			sleeper.wake();
		}
	}

	private record(suffix: string, name: string, value: unknown, createdAt = renderTime(new Date(), this.options.timestamps, 'event'), id = this.nextEventId++): EventRecord {
		const record: EventRecord = {
			id,
			topic: fullTopic(this.options.topicPrefix, suffix),
			name,
			source: 'clinic-api',
			behaviour: 'notification',
			compensating_event: {},
			previous_event: '',
			root_event: '',
			event_schema_version: '1.0',
			value,
			key: randomUUID(),
			domain: 'clinic',
			organization_id: this.options.organizationId,
			tries_left: MAX_RETRIES,
			created_at: createdAt,
			logs: [],
		};
		// In id order: an event committed late lands among those logged after its id was taken.
		if ((this.events.at(-1)?.id ?? 0) < id) this.events.push(record);
		else this.events.splice(this.events.findIndex((event) => event.id > id), 0, record);
		return record;
	}

	/** Records an event and starts its deliveries; `settled` resolves when they are all done. */
	emit(suffix: string, name: string, value: unknown): { record: EventRecord; settled: Promise<void> } {
		assertCatalogEvent(suffix, name);
		return this.deliverRecorded(this.record(suffix, name, value));
	}

	/**
	 * An event whose transaction commits `commitAfterMs` after its id was taken: the id is taken
	 * now, and the event shows in the log (among events with higher ids) and is delivered then.
	 */
	emitLate(suffix: string, name: string, value: unknown, commitAfterMs: number): { id: number; committed: Promise<{ record: EventRecord; settled: Promise<void> }> } {
		assertCatalogEvent(suffix, name);
		const id = this.nextEventId++;
		const takenAt = renderTime(new Date(), this.options.timestamps, 'event');
		const committed = new Promise<{ record: EventRecord; settled: Promise<void> }>((resolve) => {
			setTimeout(() => resolve(this.deliverRecorded(this.record(suffix, name, value, takenAt, id))), commitAfterMs);
		});
		return { id, committed };
	}

	private deliverRecorded(record: EventRecord): { record: EventRecord; settled: Promise<void> } {
		const { name } = record;
		const value = record.value;
		const targets = this.subscriptions.filter(
			(s) => s.status === 'enabled' && s.event_topic === record.topic && s.event_name === name,
		);
		if (targets.length === 0 || this.closed) return { record, settled: Promise.resolve() };
		const topLevel = this.deliveryBody === 'top-level' && value !== null && typeof value === 'object' && !Array.isArray(value);
		const body = Buffer.from(JSON.stringify(topLevel ? value : { value }), 'utf8');
		const mode = this.duplicates;
		const statuses = targets.map(
			(s): DeliveryStatus => ({
				subscription_id: s.id,
				target_url: s.url,
				outcome: 'pending',
				attempts: 0,
				retries_left: MAX_RETRIES,
				last_attempt_by: null,
			}),
		);
		const settled = Promise.all(
			targets.map((s, i) => this.track(this.deliver(record, s, body, mode, statuses[i]))),
		).then(() => undefined);
		this.progress.set(record.id, { statuses, settled });
		return { record, settled };
	}

	/** Bulk events without deliveries. */
	seed(count: number, suffix: string, name: string, valueFor: (index: number) => unknown): void {
		assertCatalogEvent(suffix, name);
		const base = Date.now() - count * 1000;
		for (let i = 0; i < count; i++) {
			const record = this.record(suffix, name, valueFor(i), new Date(base + i * 1000).toISOString());
			record.key = `seed-${record.id}`;
		}
	}

	/** Where one event's deliveries stand; undefined for an unknown event. */
	deliveryStatus(eventId: number): EventDeliveries | undefined {
		if (!this.events.some((event) => event.id === eventId)) return undefined;
		const statuses = this.progress.get(eventId)?.statuses ?? [];
		// The schedule's worst case from now: the attempt under way times out, then every
		// retry left waits its delay and times out too.
		const worstMs = (retriesLeft: number) =>
			this.options.timeoutMs + retriesLeft * (this.options.retryDelayMs + this.options.timeoutMs);
		return {
			event_id: eventId,
			settled: statuses.every((status) => status.outcome !== 'pending'),
			deliveries: statuses.map((status) => ({
				...status,
				last_attempt_by:
					status.outcome === 'pending' ? new Date(Date.now() + worstMs(status.retries_left)).toISOString() : null,
			})),
		};
	}

	/** Resolves once no attempt of this event's deliveries can come any more. */
	async eventSettled(eventId: number): Promise<EventDeliveries> {
		if (!this.deliveryStatus(eventId)) throw new Error(`No event ${eventId}`);
		await this.progress.get(eventId)?.settled;
		return this.deliveryStatus(eventId)!;
	}

	async settled(): Promise<void> {
		while (this.pending.size > 0) await Promise.all([...this.pending]);
	}

	async close(): Promise<void> {
		this.closed = true;
		for (const [timer, sleeper] of this.timers) {
			clearTimeout(timer);
			sleeper.wake();
		}
		this.timers.clear();
		for (const request of this.inFlight) request.destroy(new Error('simulator closed'));
		await this.settled();
		this.httpAgent.destroy();
		this.httpsAgent.destroy();
	}

	private track(work: Promise<void>): Promise<void> {
		const tracked = work.catch(() => undefined).finally(() => this.pending.delete(tracked));
		this.pending.add(tracked);
		return tracked;
	}

	private sleep(ms: number, subscriptionId: number): Promise<void> {
		return new Promise((resolve) => {
			const timer = setTimeout(() => {
				this.timers.delete(timer);
				resolve();
			}, ms);
			this.timers.set(timer, { wake: resolve, subscriptionId });
		});
	}

	private async deliver(
		event: EventRecord,
		subscription: Subscription,
		body: Buffer,
		mode: DuplicateMode,
		status: DeliveryStatus,
	) {
		try {
			status.outcome = await this.deliverAttempts(event, subscription, body, mode, status);
		} catch (error) {
			// An exception ends the delivery too: it is never left pending.
			status.outcome = 'stopped';
			throw error;
		}
	}

	private async deliverAttempts(
		event: EventRecord,
		subscription: Subscription,
		body: Buffer,
		mode: DuplicateMode,
		status: DeliveryStatus,
	): Promise<DeliveryStatus['outcome']> {
		const signature = sign(subscription.authentication_data.secret, body);
		const attempt = async (retriesLeft: number) => {
			status.attempts++;
			status.retries_left = retriesLeft;
			return await this.attempt(event, subscription, body, signature, retriesLeft);
		};
		let retriesLeft = MAX_RETRIES;
		for (;;) {
			if (this.closed) return 'stopped';
			const copies = mode === 'concurrent' ? 2 : 1;
			const results = await Promise.all(Array.from({ length: copies }, async () => await attempt(retriesLeft)));
			if (results.some((r) => r.ok)) {
				if (mode === 'sequential' && !this.closed) await attempt(retriesLeft);
				return 'delivered';
			}
			if (retriesLeft === 0) return 'exhausted';
			retriesLeft--;
			event.tries_left = Math.max(0, event.tries_left - 1);
			// Stopped already: no need to wait out the delay (a stop during it wakes it).
			if (subscription.status !== 'enabled') return 'stopped';
			await this.sleep(this.options.retryDelayMs, subscription.id);
			if (subscription.status !== 'enabled') return 'stopped';
		}
	}

	private attempt(
		event: EventRecord,
		subscription: Subscription,
		body: Buffer,
		signature: string,
		retriesLeft: number,
	): Promise<AttemptResult> {
		return new Promise((resolve) => {
			let settled = false;
			const finish = (code: number | null, response: string) => {
				if (settled) return;
				settled = true;
				const log: DeliveryLog = {
					id: this.nextLogId++,
					target_url: subscription.url,
					authentication_data: { secret: subscription.authentication_data.secret },
					request: body.toString('utf8'),
					response: response.slice(0, RESPONSE_KEEP),
					event_id: String(event.id),
					response_code: code,
					retries_left: retriesLeft,
					created_at: nowIso(),
				};
				event.logs.push(log);
				resolve({ ok: code !== null && code >= 200 && code < 300 });
			};
			let url: URL;
			const proxy = this.options.callbackProxy;
			const proxied = proxy !== null && subscription.url.startsWith(proxy.from);
			try {
				url = new URL(proxied ? proxy.to + subscription.url.slice(proxy.from.length) : subscription.url);
			} catch (error) {
				finish(null, `invalid URL: ${(error as Error).message}`);
				return;
			}
			const secure = url.protocol === 'https:';
			const request = (secure ? https : http).request(
				url,
				{
					method: 'POST',
					agent: secure ? this.httpsAgent : this.httpAgent,
					headers: {
						'content-type': 'application/json',
						'content-length': body.length,
						signature,
						'user-agent': 'clinic-webhooks/1.0',
						...(proxied ? { 'x-forwarded-proto': 'https', 'x-forwarded-host': new URL(subscription.url).host } : {}),
					},
					timeout: this.options.timeoutMs,
				},
				(response) => {
					const chunks: Buffer[] = [];
					response.on('data', (chunk: Buffer) => chunks.push(chunk));
					response.on('end', () => finish(response.statusCode ?? null, Buffer.concat(chunks).toString('utf8')));
					response.on('error', (error) => finish(response.statusCode ?? null, error.message));
				},
			);
			this.inFlight.add(request);
			request.on('close', () => this.inFlight.delete(request));
			request.on('timeout', () => request.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)));
			request.on('error', (error) => finish(null, error.message));
			request.end(body);
		});
	}
}
