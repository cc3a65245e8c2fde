/**
 * The one end-of-log rule (nodes/shared/eventLog.ts `endsLog`), which Event Get Many, the
 * Clinic Trigger's duplicate check, resubscribe catch-up and the Event Log Trigger's cursor
 * all read through `page().last`.
 */
import type { INode } from 'n8n-workflow';

import { EventLog, endsLog } from '../../nodes/shared/eventLog';
import type { ClinicClient } from '../../nodes/shared/transport';

describe('endsLog: where the event log ends', () => {
	test.each([
		// [events on the page, asked for, longest page the service gave, ends the log]
		[0, 100, 0, true],
		[0, 100, 100, true],
		[0, 1, 1, true],
		// A first short page may be the service's cap: the next page tells.
		[30, 100, 30, false],
		// Shorter than asked and than a page the service gave before: the end.
		[30, 100, 100, true],
		[5, 100, 7, true],
		// As long as the longest page: the cap, more may follow.
		[7, 100, 7, false],
		// A full page never ends the log.
		[100, 100, 100, false],
		[1, 1, 1, false],
	])('%i events asked %i, longest page %i: ends the log %s', (length, asked, longest, expected) => {
		expect(endsLog(length, asked, Math.max(longest, length))).toBe(expected);
	});
});

describe('EventLog.tail on an oldest-first log', () => {
	const node = { id: 'n', name: 'Clinic', type: 'clinic', typeVersion: 1, position: [0, 0], parameters: {} } as INode;
	/** A log of `count` events listed oldest first, at most `cap` a page; counts the requests. */
	function logOf(count: number, cap: number) {
		const requests: Array<{ offset: number; limit: number }> = [];
		const events = Array.from({ length: count }, (_, i) => ({ id: 100 + i, topic: 't', name: 'n', created_at: '', value: {}, logs: [] }));
		const client = {
			request: async ({ qs }: { qs: { offset: number; limit: number } }) => {
				requests.push({ offset: qs.offset, limit: qs.limit });
				return events.slice(qs.offset, qs.offset + Math.min(qs.limit, cap));
			},
		};
		return { log: new EventLog(node, client as unknown as ClinicClient), requests };
	}

	it('reads the first page once (a log that fits in it, or a longer one)', async () => {
		for (const count of [5, 150]) {
			const { log, requests } = logOf(count, 100);
			const tail = await log.tail({ topic: 't' }, 100);
			expect(tail.events.map((event) => event.id)).toEqual(Array.from({ length: Math.min(count, 100) }, (_, i) => 100 + count - 1 - i));
			expect(tail.oldestFirstLength).toBe(count);
			expect(requests.filter((request) => request.offset === 0)).toHaveLength(1);
		}
	});

	it('finds the end of a long log and reads back only its newest events', async () => {
		const { log, requests } = logOf(20_000, 100);
		const tail = await log.tail({ topic: 't' }, 100);
		expect(tail.events.map((event) => event.id)).toEqual(Array.from({ length: 100 }, (_, i) => 20_099 - i));
		expect(tail.oldestFirstLength).toBe(20_000);
		expect(requests.length).toBeLessThan(40);
	});
});
