/**
 * The one end-of-log rule (nodes/shared/eventLog.ts `endsLog`), which Event Get Many, the
 * Clinic Trigger's duplicate check, resubscribe catch-up and the Event Log Trigger's cursor
 * all read through `EventPage.last`.
 */
import { endsLog } from '../../nodes/shared/eventLog';

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
