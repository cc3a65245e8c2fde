/** The turn-keeper behind "Parallel Requests": order, the limit, items that end early, stopping. */
import { ItemTurns, TurnCancelled } from '../../nodes/Clinic/actions/itemTurns';

/** Lets pending promise callbacks run. */
const settle = async () => await new Promise((resolve) => setImmediate(resolve));

function track(turns: ItemTurns, itemIndex: number, granted: number[]) {
	return turns.take(itemIndex).then(
		() => granted.push(itemIndex),
		(error: unknown) => granted.push(error instanceof TurnCancelled ? -itemIndex : Number.NaN),
	);
}

describe('ItemTurns', () => {
	test('hands out turns in input order, whatever order items ask in', async () => {
		const turns = new ItemTurns(1);
		const granted: number[] = [];
		void track(turns, 2, granted);
		void track(turns, 1, granted);
		void track(turns, 0, granted);
		await settle();
		expect(granted).toEqual([0]);
		turns.end(0);
		await settle();
		expect(granted).toEqual([0, 1]);
		turns.end(1);
		await settle();
		expect(granted).toEqual([0, 1, 2]);
	});

	test('never more holders than the limit', async () => {
		const turns = new ItemTurns(3);
		const granted: number[] = [];
		for (let i = 0; i < 6; i++) void track(turns, i, granted);
		await settle();
		expect(granted).toEqual([0, 1, 2]);
		turns.end(1);
		await settle();
		expect(granted).toEqual([0, 1, 2, 3]);
	});

	test('an item that ended without asking does not hold up the next', async () => {
		const turns = new ItemTurns(1);
		const granted: number[] = [];
		void track(turns, 0, granted);
		void track(turns, 2, granted);
		turns.end(1); // e.g. its parameter was invalid
		await settle();
		expect(granted).toEqual([0]);
		turns.end(0);
		await settle();
		expect(granted).toEqual([0, 2]);
	});

	test('an item whose turn is over is not made to wait', async () => {
		const turns = new ItemTurns(1);
		await turns.take(0);
		turns.end(0);
		await turns.take(1);
		await expect(turns.take(0)).resolves.toBeUndefined();
	});

	test('asking again while holding the turn is free', async () => {
		const turns = new ItemTurns(1);
		await turns.take(0);
		await expect(turns.take(0)).resolves.toBeUndefined();
	});

	test('after a failure, later items are refused and earlier ones still get their turn', async () => {
		const turns = new ItemTurns(1);
		const granted: number[] = [];
		for (const i of [0, 1, 3]) void track(turns, i, granted);
		turns.stopAfter(2);
		turns.end(2);
		await settle();
		expect(granted).toEqual([0, -3]);
		turns.end(0);
		await settle();
		expect(granted).toEqual([0, -3, 1]);
		await expect(turns.take(4)).rejects.toBeInstanceOf(TurnCancelled);
	});
});
