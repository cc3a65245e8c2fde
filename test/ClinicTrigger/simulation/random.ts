/** A seeded random source (mulberry32): the same seed gives the same schedule, so every failure replays from its seed. */
export class Random {
	private state: number;

	constructor(readonly seed: number) {
		this.state = seed >>> 0;
	}

	/** A number in [0, 1). */
	next(): number {
		this.state = (this.state + 0x6d2b79f5) >>> 0;
		let t = this.state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	}

	/** True with probability `p`. */
	chance(p: number): boolean {
		return this.next() < p;
	}

	/** An integer in [min, max]. */
	int(min: number, max: number): number {
		return min + Math.floor(this.next() * (max - min + 1));
	}

	pick<T>(items: readonly T[]): T {
		return items[Math.floor(this.next() * items.length)];
	}
}
