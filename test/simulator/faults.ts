/**
 * Fault modes: the ways a real service misbehaves, switched on per host, method and path
 * for the next N matching spec requests (or until cleared). Off by default. The control
 * surface is never faulted.
 *
 * - `stall`: the request is held without an answer; with `ms` it is answered normally
 *   after that long (a write then takes effect late), else never: the connection is
 *   closed by `clearFaults`, `reset` or `close`.
 * - `reset`: the request is handled (a write takes effect), then the connection is
 *   destroyed without an answer.
 * - `status`: answers `status` (default 503) with `{error}` and, when given,
 *   `Retry-After: retryAfterSeconds`, without handling the request (nothing is done).
 * - `ignore-offset`: `GET /events` answers as if no `offset` had been sent.
 */
import type { Call } from './http';
import type { Fault, FaultKind, FaultStatus, HostName } from './types';

const KINDS: FaultKind[] = ['stall', 'reset', 'status', 'ignore-offset'];

const STATUS_TEXT: Record<number, string> = {
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
	504: 'Gateway Timeout',
};

/** `*` in a path pattern matches any run of characters (slashes included). */
function pathMatcher(path: string | RegExp | undefined): (value: string) => boolean {
	if (path === undefined) return () => true;
	if (path instanceof RegExp) return (value) => path.test(value);
	if (!path.includes('*')) return (value) => value === path;
	const source = path
		.split('*')
		.map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
		.join('.*');
	const pattern = new RegExp(`^${source}$`);
	return (value) => pattern.test(value);
}

interface ActiveFault {
	id: number;
	fault: Fault;
	matches: (value: string) => boolean;
	hits: number;
	remaining: number | null;
}

/** Checks a fault's fields; throws a plain Error (the control surface turns it into a 400). */
export function validateFault(fault: Fault): void {
	if (!fault || typeof fault !== 'object') throw new Error('a fault is an object {kind, host?, method?, path?, count?, ...}');
	if (!KINDS.includes(fault.kind)) throw new Error(`kind must be one of ${KINDS.join(', ')}, not ${String(fault.kind)}`);
	if (fault.host !== undefined && fault.host !== 'api' && fault.host !== 'webhooks') {
		throw new Error(`host must be api or webhooks, not ${String(fault.host)}`);
	}
	if (fault.method !== undefined && (typeof fault.method !== 'string' || fault.method === '')) {
		throw new Error('method must be a non-empty string');
	}
	if (fault.path !== undefined && !(fault.path instanceof RegExp) && (typeof fault.path !== 'string' || fault.path === '')) {
		throw new Error('path must be a non-empty string (with * as a wildcard) or a RegExp');
	}
	if (fault.count !== undefined && !(Number.isInteger(fault.count) && fault.count >= 1)) {
		throw new Error('count must be an integer >= 1');
	}
	if (fault.status !== undefined) {
		if (fault.kind !== 'status') throw new Error('status is for kind status only');
		if (!(Number.isInteger(fault.status) && fault.status >= 400 && fault.status <= 599)) {
			throw new Error('status must be an integer from 400 to 599');
		}
	}
	if (fault.retryAfterSeconds !== undefined) {
		if (fault.kind !== 'status') throw new Error('retryAfterSeconds is for kind status only');
		if (!(Number.isInteger(fault.retryAfterSeconds) && fault.retryAfterSeconds >= 0)) {
			throw new Error('retryAfterSeconds must be an integer >= 0');
		}
	}
	if (fault.ms !== undefined) {
		if (fault.kind !== 'stall') throw new Error('ms is for kind stall only');
		if (!(typeof fault.ms === 'number' && Number.isFinite(fault.ms) && fault.ms >= 0)) throw new Error('ms must be a number >= 0');
	}
}

/** What a request held by a stall waits for: answer normally ('go') or lose its connection ('drop'). */
type StallEnd = 'go' | 'drop';

export class Faults {
	private active: ActiveFault[] = [];
	private nextId = 1;
	private readonly held = new Set<{ end: (how: StallEnd) => void }>();
	/** Requests a fault met since start or the last clear, used-up faults included. */
	hits = 0;

	add(fault: Fault): number {
		validateFault(fault);
		const id = this.nextId++;
		const copy: Fault = { ...fault, ...(fault.method ? { method: fault.method.toUpperCase() } : {}) };
		this.active.push({ id, fault: copy, matches: pathMatcher(fault.path), hits: 0, remaining: fault.count ?? null });
		return id;
	}

	/** Faults set and not used up, in the order they were added, with their hits so far. */
	list(): FaultStatus[] {
		return this.active.map(({ id, fault, hits, remaining }) => ({
			...fault,
			...(fault.path instanceof RegExp ? { path: String(fault.path) } : {}),
			id,
			hits,
			remaining,
		}));
	}

	/** Removes every fault; requests held by a stall lose their connection (never answered). */
	clear(): void {
		this.active = [];
		this.hits = 0;
		for (const stall of [...this.held]) stall.end('drop');
	}

	/** The first fault matching this request (its count is used), or undefined. */
	take(host: HostName, call: Call): Fault | undefined {
		const found = this.active.find(
			({ fault, matches }) =>
				(fault.host === undefined || fault.host === host) &&
				(fault.method === undefined || fault.method === call.method) &&
				matches(call.path),
		);
		if (!found) return undefined;
		found.hits++;
		this.hits++;
		if (found.remaining !== null && --found.remaining === 0) this.active = this.active.filter((entry) => entry !== found);
		return found.fault;
	}

	/**
	 * Holds a request: resolves 'go' after `ms` (when given; the client giving up changes
	 * nothing then), else 'drop' once the client gave up (`onGone`); 'drop' in any case when
	 * faults are cleared or the simulator closes.
	 */
	hold(ms: number | undefined, onGone: (listener: () => void) => void): Promise<StallEnd> {
		return new Promise((resolve) => {
			let timer: NodeJS.Timeout | undefined;
			const entry = {
				end: (how: StallEnd) => {
					if (!this.held.delete(entry)) return;
					if (timer) clearTimeout(timer);
					resolve(how);
				},
			};
			this.held.add(entry);
			// With `ms` the service carries on even when the client gave up (a write takes effect late).
			if (ms !== undefined) timer = setTimeout(() => entry.end('go'), ms);
			else onGone(() => entry.end('drop'));
		});
	}

	/** Requests held by a stall right now. */
	heldCount(): number {
		return this.held.size;
	}
}

/** The answer of a `status` fault. */
export function statusReply(fault: Fault): { status: number; json: unknown; headers: Record<string, string> } {
	const status = fault.status ?? 503;
	return {
		status,
		json: { error: STATUS_TEXT[status] ?? 'Service Error' },
		headers: fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) },
	};
}

/** The call as `GET /events` sees it when the service ignores `offset` (query and JSON body). */
export function withoutOffset(call: Call): Call {
	const { offset: _queryOffset, ...query } = call.query;
	let body = call.body;
	if (body && typeof body === 'object' && !Array.isArray(body) && 'offset' in body) {
		const { offset: _bodyOffset, ...rest } = body as Record<string, unknown>;
		body = rest;
	}
	return { ...call, query, body };
}
