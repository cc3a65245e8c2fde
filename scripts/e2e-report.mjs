#!/usr/bin/env node
/**
 * Where an end-to-end run's time went, read from a results dir of `npm run test:all`:
 * each lane's wall time (lane-times), each test file's time, and the n8n processes each
 * file started (N8N_E2E_PROCESS_LOG: one JSON line per process). Diagnostic only: it
 * never changes the summary line.
 *
 *   node scripts/e2e-report.mjs .test-results
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const dir = resolve(process.argv[2] ?? '.test-results');
const lines = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
const minutes = (ms) => `${(ms / 60_000).toFixed(1)} min`;

const laneTimes = new Map(lines(join(dir, 'lane-times')).map((line) => {
	const [lane, seconds] = line.split(' ');
	return [lane, Number(seconds) * 1000];
}));
const processes = lines(join(dir, 'n8n-processes.jsonl')).map((line) => JSON.parse(line));
// A file may have two lines: its own, and its lane server's (test/e2e/harness/laneServer.ts).
const cpu = new Map();
for (const line of lines(join(dir, 'cpu.jsonl'))) {
	const entry = JSON.parse(line);
	const file = relative(ROOT, entry.file);
	const sum = cpu.get(file) ?? { jestCpuSeconds: 0, childCpuSeconds: 0 };
	cpu.set(file, { jestCpuSeconds: sum.jestCpuSeconds + entry.jestCpuSeconds, childCpuSeconds: sum.childCpuSeconds + entry.childCpuSeconds });
}
const perFile = new Map();
for (const entry of processes) {
	const file = entry.file ? relative(ROOT, entry.file) : '(outside a test file)';
	const counts = perFile.get(file) ?? {};
	counts[entry.command] = (counts[entry.command] ?? 0) + 1;
	perFile.set(file, counts);
}

const out = ['', 'End-to-end time, by lane and file:'];
for (const report of readdirSync(dir).filter((file) => /^e2e-.*\.json$/.test(file)).sort()) {
	const lane = report.slice(4, -5);
	const results = JSON.parse(readFileSync(join(dir, report), 'utf8')).testResults ?? [];
	out.push(`  lane ${lane}: ${laneTimes.has(lane) ? minutes(laneTimes.get(lane)) : '?'}`);
	for (const result of [...results].sort((a, b) => a.startTime - b.startTime)) {
		const file = relative(ROOT, result.name);
		const started = Object.entries(perFile.get(file) ?? {}).map(([command, count]) => `${count} ${command}`).join(', ');
		const used = cpu.get(file);
		const cpuText = used ? `, CPU ${((used.jestCpuSeconds + used.childCpuSeconds) / 60).toFixed(1)} min` : '';
		out.push(`    ${minutes(result.endTime - result.startTime).padStart(9)}${cpuText}  ${file}${started ? `  (${started})` : ''}`);
	}
}
const byCommand = {};
for (const entry of processes) byCommand[entry.command] = (byCommand[entry.command] ?? 0) + 1;
const cpuTotal = [...cpu.values()].reduce((sum, entry) => sum + entry.jestCpuSeconds + entry.childCpuSeconds, 0);
if (cpu.size > 0) out.push(`  CPU of the end-to-end files: ${minutes(cpuTotal * 1000)}`);
const n8nCount = processes.filter((entry) => entry.command.startsWith('n8n ')).length;
out.push(`  n8n processes started: ${n8nCount} (${Object.entries(byCommand).filter(([command]) => command.startsWith('n8n ')).map(([command, count]) => `${count} ${command}`).join(', ')})`);
console.log(out.join('\n'));
