/**
 * How n8n answered a delivery that starts a run. n8n answers it once the run is stored
 * (2.x) or taken (1.x): a 2xx means the event ran, and so may a connection closed before
 * any answer; any other answer (a server error) means nothing was stored, and a copy of the
 * event may run it instead. Each delivery the duplicate check decides is watched once, from
 * the step that decides it; its claims and runs (eventClaims.ts, payloadRuns.ts) keep that watch.
 */

/** The response n8n answers a delivery on (express's), as far as the watch needs it. */
export interface DeliveryAnswer {
	once(event: 'finish' | 'close', listener: () => void): unknown;
	statusCode: number;
	writableFinished: boolean;
}

/**
 * How n8n answered a delivery: `status` undefined while it has not answered, null when the
 * connection closed without an answer (the run may have started).
 */
export interface WatchedAnswer {
	status?: number | null;
	/** Settles when n8n answered. */
	answered: Promise<void>;
}

/** Starts watching how n8n answers a delivery; call it before the delivery is recorded anywhere. */
export function watchAnswer(answer: DeliveryAnswer): WatchedAnswer {
	const watched: { status?: number | null } = {};
	const answered = new Promise<void>((resolve) => {
		answer.once('finish', () => {
			watched.status = answer.statusCode;
			resolve();
		});
		answer.once('close', () => {
			watched.status ??= answer.writableFinished ? answer.statusCode : null;
			resolve();
		});
	});
	return Object.assign(watched, { answered });
}

const ranOrMayHave = (status: number | null) => status === null || (status >= 200 && status < 300);

/** n8n answered and did not run it (a server error: no run stored). */
export const refused = (watched: WatchedAnswer) => watched.status !== undefined && !ranOrMayHave(watched.status);

/** n8n has not answered yet. */
export const pending = (watched: WatchedAnswer) => watched.status === undefined;

/** How long this process remembers what it ran (claims, runs without an event id). */
export const RUNS_KEPT_FOR_MS = 24 * 60 * 60_000;

/** Still remembered: recorded less than RUNS_KEPT_FOR_MS ago. */
export const recent = (at: number) => Date.now() - at < RUNS_KEPT_FOR_MS;
