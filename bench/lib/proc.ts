/**
 * Resident memory and CPU time of an n8n process, read from /proc (Linux):
 * - `ProcessMeter` keeps the VmHWM of a process (`n8n execute`) and its CPU time until it exits;
 * - `RssSampler` samples VmRSS of a long-running process (`n8n start`) and keeps the
 *   maximum seen while it runs, so a window of a running server can be measured.
 */
import { readFileSync } from 'node:fs';

const POLL_MS = 10;

function statusField(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
	try {
		const status = readFileSync(`/proc/${pid}/status`, 'utf8');
		const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
		return match ? Number(match[1]) * 1024 : undefined;
	} catch {
		return undefined; // gone
	}
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User + system CPU time of `pid` in ms (its own threads, not its children). */
function cpuMs(pid: number): number | undefined {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		// "pid (comm) state ..." : comm may hold spaces; utime and stime are fields 14 and 15.
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
	} catch {
		return undefined;
	}
}

/**
 * VmHWM (the kernel's own high-water mark of RSS) and CPU time of `pid`, polled until
 * `stop()`. Both only grow, so the last reading before the process exits is (within one
 * poll interval) its final value.
 */
export class ProcessMeter {
	private peak = 0;
	private cpu = 0;
	private readonly timer: NodeJS.Timeout;

	constructor(private readonly pid: number) {
		this.timer = setInterval(() => this.poll(), POLL_MS).unref();
		this.poll();
	}

	private poll(): void {
		const hwm = statusField(this.pid, 'VmHWM');
		if (hwm !== undefined) this.peak = Math.max(this.peak, hwm);
		const cpu = cpuMs(this.pid);
		if (cpu !== undefined) this.cpu = Math.max(this.cpu, cpu);
	}

	/** Stops polling: peak RSS in bytes and CPU time in ms (undefined if never read). */
	stop(): { peakRss: number | undefined; cpuMs: number | undefined } {
		clearInterval(this.timer);
		return { peakRss: this.peak > 0 ? this.peak : undefined, cpuMs: this.cpu > 0 ? this.cpu : undefined };
	}
}

/** Highest VmRSS of `pid` between construction and `stop()`. */
export class RssSampler {
	private peak = 0;
	private readonly timer: NodeJS.Timeout;

	constructor(private readonly pid: number) {
		this.sample();
		this.timer = setInterval(() => this.sample(), POLL_MS * 5).unref();
	}

	private sample(): void {
		const rss = statusField(this.pid, 'VmRSS');
		if (rss !== undefined) this.peak = Math.max(this.peak, rss);
	}

	stop(): number | undefined {
		clearInterval(this.timer);
		this.sample();
		return this.peak > 0 ? this.peak : undefined;
	}
}

export function currentRss(pid: number): number | undefined {
	return statusField(pid, 'VmRSS');
}
