/**
 * Who may talk to the service now. Items take turns in input order and at most `limit`
 * items hold one at a time ("Parallel Requests"), so with 1 every item's requests end
 * before the next item's begin. Items may read their parameters before their turn: that
 * work then overlaps the requests already on the wire.
 */
export class TurnCancelled extends Error {
	constructor() {
		super('An earlier item failed');
	}
}

interface Waiter {
	resolve: () => void;
	reject: (error: Error) => void;
}

export class ItemTurns {
	private readonly holders = new Set<number>();

	/** Items waiting for their turn, by index. */
	private readonly waiting = new Map<number, Waiter>();

	/** Items that ended before asking for a turn (e.g. a parameter was invalid). */
	private readonly endedEarly = new Set<number>();

	/** The lowest item that has neither had its turn nor ended. */
	private next = 0;

	/** Items above this one get no turn: an item failed and the run stops there. */
	private lastAllowed = Infinity;

	constructor(private readonly limit: number) {}

	/** Resolves once the item holds a turn; an item keeps its turn until `end`. */
	async take(itemIndex: number): Promise<void> {
		// An item already past its turn has nothing to wait for (and must not wait forever).
		if (this.holders.has(itemIndex) || itemIndex < this.next) return;
		if (itemIndex > this.lastAllowed) throw new TurnCancelled();
		const turn = new Promise<void>((resolve, reject) => this.waiting.set(itemIndex, { resolve, reject }));
		this.handOut();
		await turn;
	}

	/** The item is done (answered, failed or never asked): its turn passes on. */
	end(itemIndex: number): void {
		if (!this.holders.delete(itemIndex) && itemIndex >= this.next) this.endedEarly.add(itemIndex);
		this.handOut();
	}

	/** No turns for items after this one; those already waiting are told so. */
	stopAfter(itemIndex: number): void {
		this.lastAllowed = Math.min(this.lastAllowed, itemIndex);
		for (const [index, waiter] of this.waiting) {
			if (index > this.lastAllowed) {
				this.waiting.delete(index);
				waiter.reject(new TurnCancelled());
			}
		}
	}

	private handOut(): void {
		while (this.holders.size < this.limit) {
			if (this.endedEarly.delete(this.next)) {
				this.next++;
				continue;
			}
			const waiter = this.waiting.get(this.next);
			if (!waiter) return;
			this.waiting.delete(this.next);
			this.holders.add(this.next);
			this.next++;
			waiter.resolve();
		}
	}
}
