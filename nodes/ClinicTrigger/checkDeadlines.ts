/**
 * The duplicate check's deadlines on one clock: every delivery waiting on the event log
 * shares a single timer, so a delivery whose read answers in time leaves no timer behind
 * (a burst of 600 deliveries would otherwise hold 600 timers of EVENT_LOG_CHECK_MS).
 */
import { sleep } from 'n8n-workflow';

import { keptInProcess } from '../../credentials/ClinicProcessMemory';

interface Waiting {
	deadline: number;
	late: () => void;
}

const waiting = keptInProcess('duplicate check deadlines', 'one per delivery waiting on the event log, until its deadline', new Set<Waiting>());
let clockRunning = false;

/** Sleeps to the earliest deadline, tells the late ones, and stops once nobody waits. */
async function runClock(): Promise<void> {
	clockRunning = true;
	try {
		while (waiting.size > 0) {
			// Deadlines are set in arrival order, so the earliest is among the first.
			const next = Math.min(...[...waiting].map((entry) => entry.deadline));
			await sleep(Math.max(0, next - Date.now()));
			const now = Date.now();
			for (const entry of waiting) {
				if (entry.deadline > now) continue;
				waiting.delete(entry);
				entry.late();
			}
		}
	} finally {
		clockRunning = false;
	}
}

const LATE = Symbol('late');

/** A read's answer, or an error once `deadline` has passed (the read goes on for others). */
export async function withinDeadline<T>(read: Promise<T>, deadline: number, lateMessage: string): Promise<T> {
	let entry: Waiting | undefined;
	const late = new Promise<typeof LATE>((resolve) => {
		entry = { deadline, late: () => resolve(LATE) };
	});
	waiting.add(entry!);
	if (!clockRunning) void runClock();
	try {
		const answer = await Promise.race([read, late]);
		if (answer !== LATE) return answer as T;
		read.catch(() => undefined);
		throw new Error(lateMessage);
	} finally {
		waiting.delete(entry!);
	}
}
