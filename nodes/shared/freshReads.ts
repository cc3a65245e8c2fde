/**
 * Reads shared by callers that arrive together, without ever answering a caller with
 * something older than its arrival: a caller takes a read that started after it arrived
 * (so it holds whatever was true when the caller arrived), else it waits for the next one,
 * which starts when the current one ends, for everyone who arrived meanwhile. At most one
 * read per key is on the wire. Order is told by a counter, not the clock.
 *
 * The Clinic Trigger shares its reads of the credential (keptCredentials.ts) and of the end
 * of the event log (the service logs an event before delivering it, so a read started after
 * the delivery arrived holds it).
 */
interface SharedRead<T> {
	startedAt: number;
	value: Promise<T>;
	next?: Promise<T>;
	waitingForNext: number;
}

export class FreshReads<T> {
	private readonly reads = new Map<string, SharedRead<T>>();
	private sequence = 0;

	/** A caller's place in time: pass it to `read`. */
	arrival(): number {
		return ++this.sequence;
	}

	/**
	 * The value of a read of `key` that started after `arrivedAt`. `start` begins a read;
	 * `waiting` is how many callers will take it (at least 1).
	 */
	read(key: string, arrivedAt: number, start: (waiting: number) => Promise<T>, waiting = 1): Promise<T> {
		const current = this.reads.get(key);
		if (current && current.startedAt > arrivedAt) return current.value;
		if (current) {
			current.waitingForNext++;
			const again = () => this.read(key, arrivedAt, start, current.waitingForNext);
			current.next ??= current.value.then(again, again);
			return current.next;
		}
		const shared: SharedRead<T> = { startedAt: this.arrival(), value: start(waiting), waitingForNext: 0 };
		this.reads.set(key, shared);
		const done = () => this.reads.get(key) === shared && this.reads.delete(key);
		shared.value.then(done, done);
		return shared.value;
	}
}
