/**
 * A jest reporter that records the CPU time each test file cost the machine: jest's own and
 * that of every process the file started and reaped (n8n, its task runners, PostgreSQL,
 * Redis, npm, Chromium), read from /proc/self/stat (utime, stime, cutime, cstime) when the
 * file starts and ends. With --runInBand, files run one after the other in this process, so
 * the difference is the file's. Writes one JSON line per file to N8N_E2E_CPU_LOG when set
 * (`npm run test:all` sets it; scripts/e2e-report.mjs reads it); Linux only, else silent.
 * An n8n a lane's files share is reaped after the last file: the lane's teardown adds its
 * line (test/e2e/harness/laneServer.ts), charged to the file that started it.
 */
const { appendFileSync, readFileSync } = require('node:fs');

const TICKS_PER_SECOND = 100;

/** CPU seconds of this process and its reaped children, or undefined off Linux. */
function cpuSeconds() {
	try {
		const stat = readFileSync('/proc/self/stat', 'utf8');
		// Fields after the command name (which may hold spaces) start at state, field 3.
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
		return { own: (utime + stime) / TICKS_PER_SECOND, children: (cutime + cstime) / TICKS_PER_SECOND };
	} catch {
		return undefined;
	}
}

class CpuReport {
	constructor() {
		this.started = new Map();
	}

	onTestFileStart(test) {
		this.started.set(test.path, { cpu: cpuSeconds(), at: Date.now() });
	}

	onTestFileResult(test) {
		const file = process.env.N8N_E2E_CPU_LOG;
		const start = this.started.get(test.path);
		const end = cpuSeconds();
		if (!file || !start?.cpu || !end) return;
		const line = {
			file: test.path,
			wallSeconds: Math.round((Date.now() - start.at) / 1000),
			jestCpuSeconds: Math.round(end.own - start.cpu.own),
			childCpuSeconds: Math.round(end.children - start.cpu.children),
		};
		appendFileSync(file, `${JSON.stringify(line)}\n`);
	}
}

module.exports = CpuReport;
module.exports.cpuSeconds = cpuSeconds;
