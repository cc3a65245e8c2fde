/**
 * The clinic's webhook service as the simulation's world sees it, in virtual time: ids
 * taken in order and committed out of order, the event log (`GET /events`, parameters in a
 * JSON body, either list order, a page cap, slow or failing reads), subscriptions, and
 * deliveries with copies at once and seconds later, retried on a schedule, each try given
 * up after the service's wait. Nothing here knows how the trigger works.
 */
import { createHmac } from 'node:crypto';

import type { Random } from './random';

export interface ServiceShape {
	order: 'oldest-first' | 'newest-first';
	/** The largest page the service gives, whatever `limit` asks. */
	pageCap: number;
	/** How long one `GET /events` takes. */
	readMs: (random: Random) => number;
	/** The share of `GET /events` answered 500. */
	readFailure: number;
	/** How long the service waits for a delivery's answer before it counts the try as failed. */
	waitMs: number;
	/** The waits before each retry of a failed delivery. */
	retryMs: number[];
	/** The share of deliveries sent twice at once, and sent again a few seconds later. */
	copyAtOnce: number;
	copyLater: number;
}

export interface LoggedEvent {
	id: number;
	topic: string;
	name: string;
	created_at: string;
	value: Record<string, unknown>;
	logs: Array<Record<string, unknown>>;
}

export interface Subscription {
	id: number;
	url: string;
	event_topic: string;
	event_name: string;
	status: 'enabled' | 'disabled';
	authentication_data: { secret: string };
	deleted_at?: string;
}

/** One try of one delivery, as the service saw it: `answeredAt` is undefined when no answer came within the wait. */
export interface DeliveryTry {
	eventId: number;
	sentAt: number;
	status?: number;
	answeredAt?: number;
	/** When the trigger's webhook() returned (n8n may answer later: it stores the run first). */
	returnedAt?: number;
	/** Its webhook() handed n8n a run (else the trigger answered it itself: nothing new, or a refusal). */
	startedRun?: boolean;
	/** The process it reached was killed before it answered. */
	cutOff?: boolean;
}

export type Answer = { statusCode: number; headers: Record<string, string>; body: unknown };
/** Where the service sends a delivery: the n8n model; resolves with the HTTP status, or never (no answer). */
export type Deliver = (url: string, rawBody: Buffer, headers: Record<string, string>, tried: DeliveryTry) => Promise<number>;

export class ClinicService {
	/** The log: committed events in id order. */
	readonly events: LoggedEvent[] = [];
	readonly subscriptions: Subscription[] = [];
	readonly tries: DeliveryTry[] = [];
	/** `GET /events` requests: how many, how many under way now, and the most at once (the load the trigger puts on the log). */
	readonly logReads = { count: 0, underWay: 0, mostAtOnce: 0 };
	/** Whether the subscriptions deliver (false: the service stopped them, a backlog piles up). */
	delivering = true;
	/** Ids taken whose transaction has not committed yet. */
	uncommitted = 0;
	private nextId = 1000;
	private nextSubscriptionId = 1;

	constructor(
		readonly shape: ServiceShape,
		private readonly random: Random,
		private readonly deliver: Deliver,
	) {}

	/** Takes the next id now; the event shows in the log and is delivered `commitAfterMs` later. */
	emit(topic: string, name: string, commitAfterMs = 0): number {
		const id = this.nextId++;
		const event: LoggedEvent = { id, topic, name, created_at: new Date().toISOString(), value: { id: `p-${id}`, name: `Patient ${id}` }, logs: [] };
		const commit = () => {
			if (commitAfterMs > 0) this.uncommitted--;
			const at = this.events.findIndex((other) => other.id > id);
			this.events.splice(at === -1 ? this.events.length : at, 0, event);
			this.deliverEvent(event);
		};
		if (commitAfterMs > 0) this.uncommitted++;
		if (commitAfterMs > 0) setTimeout(commit, commitAfterMs);
		else commit();
		return id;
	}

	/** Sends the newest event again to its subscriptions, as live traffic keeps waking a trigger. */
	resend(): void {
		const live = this.subscriptions.filter((s) => s.status === 'enabled' && !s.deleted_at);
		const newest = [...this.events].reverse().find((event) => live.some((s) => s.event_topic === event.topic && s.event_name === event.name));
		if (newest) this.deliverEvent(newest);
	}

	/** Delivers an event to every live subscription for its topic and name (none while the service stopped delivering). */
	private deliverEvent(event: LoggedEvent): void {
		if (!this.delivering) return;
		for (const subscription of this.subscriptions) {
			if (subscription.status !== 'enabled' || subscription.deleted_at) continue;
			if (subscription.event_topic !== event.topic || subscription.event_name !== event.name) continue;
			void this.deliverWithRetries(event, subscription);
			if (this.random.chance(this.shape.copyAtOnce)) void this.deliverWithRetries(event, subscription);
			if (this.random.chance(this.shape.copyLater)) setTimeout(() => void this.deliverWithRetries(event, subscription), this.random.int(1000, 8000));
		}
	}

	private async deliverWithRetries(event: LoggedEvent, subscription: Subscription): Promise<void> {
		const rawBody = Buffer.from(JSON.stringify({ value: event.value }));
		const headers = { 'content-type': 'application/json', signature: createHmac('sha256', subscription.authentication_data.secret).update(rawBody).digest('hex') };
		for (let attempt = 0; attempt <= this.shape.retryMs.length; attempt++) {
			if (attempt > 0) await sleep(this.shape.retryMs[attempt - 1]);
			const tried: DeliveryTry = { eventId: event.id, sentAt: Date.now() };
			this.tries.push(tried);
			const answered = await Promise.race([this.deliver(subscription.url, rawBody, headers, tried).then((status) => ({ status })), sleep(this.shape.waitMs).then(() => undefined)]);
			if (answered) {
				tried.status = answered.status;
				tried.answeredAt = Date.now();
			}
			event.logs.push({ target_url: subscription.url, response_code: answered?.status ?? null, retries_left: this.shape.retryMs.length - attempt });
			if (answered && answered.status >= 200 && answered.status < 300) return;
		}
	}

	/** The webhook service's API, as the trigger's requests reach it. */
	async request(method: string, path: string, body: Record<string, unknown> | undefined): Promise<Answer> {
		if (method === 'GET' && path === '/events') return await this.listEvents(body ?? {});
		const json = (statusCode: number, answer: unknown): Answer => ({ statusCode, headers: {}, body: answer });
		await sleep(this.random.int(5, 50));
		if (method === 'GET' && path === '/webhooks') return json(200, { webhooks: this.subscriptions.filter((s) => !s.deleted_at) });
		if (method === 'POST' && path === '/webhooks') {
			const { url, topic, event_name, authentication_data } = body as { url: string; topic: string; event_name: string; authentication_data: { secret: string } };
			const subscription: Subscription = { id: this.nextSubscriptionId++, url, event_topic: topic, event_name, status: 'enabled', authentication_data };
			this.subscriptions.push(subscription);
			return json(201, { webhook: subscription });
		}
		const deleted = /^\/webhooks\/(\d+)$/.exec(path);
		if (method === 'DELETE' && deleted) {
			const subscription = this.subscriptions.find((s) => String(s.id) === deleted[1] && !s.deleted_at);
			if (!subscription) return json(404, { error: 'Not found' });
			subscription.deleted_at = new Date().toISOString();
			return json(200, {});
		}
		return json(404, { error: `No route ${method} ${path}` });
	}

	/** `GET /events`: the parameters from the JSON body, as the contract declares them. */
	private async listEvents(body: Record<string, unknown>): Promise<Answer> {
		const reads = this.logReads;
		reads.count++;
		reads.mostAtOnce = Math.max(reads.mostAtOnce, ++reads.underWay);
		await sleep(this.shape.readMs(this.random)).finally(() => reads.underWay--);
		if (this.random.chance(this.shape.readFailure)) return { statusCode: 500, headers: {}, body: { error: 'Internal error' } };
		const offset = Number(body.offset ?? 0);
		const limit = Math.min(Number(body.limit ?? 25), this.shape.pageCap);
		const matching = this.events.filter((event) => (!body.topic || event.topic === body.topic) && (!body.name || event.name === body.name));
		const listed = this.shape.order === 'oldest-first' ? matching : [...matching].reverse();
		const page = listed.slice(offset, offset + limit).map((event) => ({ ...event, logs: event.logs.map((log) => ({ ...log })) }));
		return { statusCode: 200, headers: {}, body: page };
	}
}

export const sleep = async (ms: number) => await new Promise<void>((resolve) => setTimeout(resolve, ms));
