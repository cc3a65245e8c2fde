/** The webhook service's event log (`GET /events`): where its parameters travel, how pages are read, where the log ends. */
import type { IDataObject, INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { ClinicClient } from './transport';
import { eventRecordsOf, orderOf } from './eventRecord';
import type { EventFilter, EventRecord } from './eventRecord';

/**
 * The end of the event log, the one rule every reader follows. The service's largest page is not documented, so a
 * short page may only be its cap: a page ends the log when empty, or shorter than asked and than the longest page yet.
 */
export function endsLog(length: number, asked: number, longestPage: number): boolean {
	return length === 0 || (length < asked && length < longestPage);
}

/** Pages one reader reads at most: no loop over the log runs without bound. */
const MAX_PAGES_PER_READER = 5000;

/** A reader of the event log: one per execution or poll. */
export class EventLog {
	private pagesRead = 0;
	private lastPage?: { key: string; offset: number; ids: string; repeats: number };
	private longestPage = 0;

	constructor(
		private readonly node: INode,
		private readonly client: ClinicClient,
	) {}

	/** One page, as the service lists it, and whether it ends the log (`endsLog`). The spec declares its parameters in a JSON body on the GET; some deployments read the query string: both carry them. */
	async page(filter: EventFilter, offset: number, limit: number, itemIndex = 0) {
		const params: IDataObject = { offset, limit };
		if (filter.topic) params.topic = filter.topic;
		if (filter.name) params.name = filter.name;
		const body = await this.client.request<unknown>(
			{
				host: 'webhooks',
				method: 'GET',
				path: '/events',
				qs: params,
				body: { ...params },
				bodyOnGet: true,
				auth: 'integration',
				subject: 'The event log',
			},
			itemIndex,
		);
		const events = eventRecordsOf(this.node, body, itemIndex);
		this.checkProgress(JSON.stringify([filter.topic, filter.name, limit]), offset, events, itemIndex);
		this.longestPage = Math.max(this.longestPage, events.length);
		return { events, last: endsLog(events.length, limit, this.longestPage) };
	}

	/** Stops a read that cannot end: the same page at three offsets in a row (the service ignores `offset`; twice is a live log shifting), or too many pages. */
	private checkProgress(key: string, offset: number, events: EventRecord[], itemIndex: number): void {
		const ids = events.map((event) => event.id).join(',');
		const last = this.lastPage;
		const same = events.length > 0 && !!last && last.key === key && last.offset !== offset && last.ids === ids;
		this.lastPage = { key, offset, ids, repeats: same ? (last?.repeats ?? 0) + 1 : 0 };
		if (this.lastPage.repeats >= 2) {
			throw new NodeOperationError(this.node, 'The event service answered the same page three times: it ignored the offset', {
				itemIndex,
				description: 'Stopped instead of reading the same events again. Turn off Return All and use Limit, or set Page Size large enough for all events.',
			});
		}
		if (++this.pagesRead > MAX_PAGES_PER_READER) {
			throw new NodeOperationError(this.node, `The event log did not end after ${MAX_PAGES_PER_READER} pages`, {
				itemIndex,
				description: 'Stopped reading. Narrow the filters (topic, event name) or use Limit.',
			});
		}
	}

	/** The newest `max` events matching the filter, newest first, and, when the service lists oldest first, how many match (found by doubling the offset). */
	async tail(filter: EventFilter, max: number, pageSize = DEFAULT_PAGE_SIZE): Promise<{ events: EventRecord[]; oldestFirstLength?: number }> {
		const first = await this.page(filter, 0, pageSize);
		const order = orderOf(first.events);
		// Oldest first: the last `max` of the events the log holds; newest first (or a single event, or none): from the top.
		const end = order !== 'oldest-first' ? undefined : first.last ? first.events.length : await this.endOffset(filter, first.events.length);
		const found = new Map<number, EventRecord>();
		for (let offset = end === undefined ? 0 : Math.max(0, end - max); offset < (end ?? Infinity) && found.size < max; ) {
			const page = offset === 0 ? first : await this.page(filter, offset, pageSize);
			// Nothing new on the page: the log shrank, or the service ignored the offset. Pages may come back short.
			if (page.events.every((event) => found.has(event.id))) break;
			for (const event of page.events) if (found.size < max) found.set(event.id, event);
			offset += page.events.length;
			if (end === undefined && (page.last || order === undefined)) break;
		}
		return { events: [...found.values()].sort((a, b) => b.id - a.id), oldestFirstLength: end };
	}

	/** The number of events in an oldest-first log: offsets double until a one-event page is empty, then halve between (about 2·log2(n/page) requests). */
	private async endOffset(filter: EventFilter, firstPageLength: number): Promise<number> {
		// Events [0, low) exist; once found, offset `high` has none. Doubling and halving move the bounds alike.
		let low = firstPageLength;
		let high: number | undefined;
		for (let step = Math.max(low, 1); high === undefined || low < high; step *= 2) {
			const offset = high === undefined ? low - 1 + step : Math.floor((low + high) / 2);
			if ((await this.page(filter, offset, 1)).last) high = offset;
			else low = offset + 1;
		}
		return low;
	}
}

export const DEFAULT_PAGE_SIZE = 100;
