#!/usr/bin/env node
/**
 * The one line `npm run test:all` ends with, "N passed, N failed", read from jest's JSON
 * reports so that it cannot say more than what ran:
 * - every suite named in test/expectedTests.json must have left its report, and each test
 *   file in it at least the number of tests it holds there (a deleted file, a crashed global
 *   setup or a suite that never ran counts its expected tests as failed);
 * - a skipped or todo test counts as failed unless test/allowedSkips.json names it with a reason;
 * - a suite that exited non-zero with no failure in its report counts one failure;
 * - every other step that failed (type-check, lint, ...) counts one failure.
 *
 *   node scripts/test-summary.mjs <results dir>   the line; exit 1 when anything failed
 *   node scripts/test-summary.mjs --write-floors  records how many tests each file holds now
 *
 * A results dir holds <suite>.json (jest --json), <suite>.exit (its exit code) and
 * failed-steps (one line per failed step).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const FLOORS_FILE = join(ROOT, 'test', 'expectedTests.json');
const ALLOWED_SKIPS_FILE = join(ROOT, 'test', 'allowedSkips.json');
const SUITES = ['unit', 'e2e'];

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const fileOf = (result) => relative(ROOT, result.name);

/** Counts, and the reasons for every failure that is not a failed test, from a results dir. */
export function summarise(resultsDir, floors, allowedSkips) {
	let passed = 0;
	let failed = 0;
	const problems = [];
	const allowed = new Set(allowedSkips.map((entry) => entry.test));
	for (const [suite, files] of Object.entries(floors)) {
		const expected = Object.values(files).reduce((sum, count) => sum + count, 0);
		// A suite may run in several jest processes side by side: <suite>.json, <suite>-<lane>.json.
		const ofSuite = (extension) => (existsSync(resultsDir) ? readdirSync(resultsDir) : []).filter((file) => file === `${suite}.${extension}` || (file.startsWith(`${suite}-`) && file.endsWith(`.${extension}`)));
		const reportFiles = ofSuite('json');
		if (reportFiles.length === 0) {
			failed += Math.max(1, expected);
			problems.push(`${suite}: no report (the suite did not run or crashed before reporting); its ${expected} expected tests count as failed`);
			continue;
		}
		const reports = reportFiles.map((file) => readJson(join(resultsDir, file)));
		const report = {
			numPassedTests: reports.reduce((sum, part) => sum + part.numPassedTests, 0),
			numFailedTests: reports.reduce((sum, part) => sum + part.numFailedTests, 0),
			numRuntimeErrorTestSuites: reports.reduce((sum, part) => sum + part.numRuntimeErrorTestSuites, 0),
			testResults: reports.flatMap((part) => part.testResults),
		};
		passed += report.numPassedTests;
		let suiteFailed = report.numFailedTests + report.numRuntimeErrorTestSuites;
		for (const result of report.testResults) {
			for (const test of result.assertionResults) {
				if (['pending', 'todo', 'skipped', 'disabled'].includes(test.status) && !allowed.has(test.fullName)) {
					suiteFailed++;
					problems.push(`${suite}: "${test.fullName}" was ${test.status === 'todo' ? 'a todo' : 'skipped'} (allow it in test/allowedSkips.json with a reason, or make it run)`);
				}
			}
		}
		const counts = new Map(report.testResults.map((result) => [fileOf(result), result.assertionResults.length]));
		for (const [file, floor] of Object.entries(files)) {
			const count = counts.get(file) ?? 0;
			if (count < floor) {
				suiteFailed += floor - count;
				problems.push(`${suite}: ${file} ran ${count} tests, ${floor} expected (test/expectedTests.json)`);
			}
		}
		const exitCode = Math.max(0, ...ofSuite('exit').map((file) => Number(readFileSync(join(resultsDir, file), 'utf8').trim()) || 0));
		if (exitCode !== 0 && suiteFailed === 0) {
			suiteFailed = 1;
			problems.push(`${suite}: jest exited with ${exitCode} and no failed test in its report (a global setup or teardown failed)`);
		}
		failed += suiteFailed;
	}
	const stepsFile = join(resultsDir, 'failed-steps');
	if (existsSync(stepsFile)) {
		for (const step of readFileSync(stepsFile, 'utf8').split('\n').filter(Boolean)) {
			failed++;
			problems.push(`step failed: ${step}`);
		}
	}
	if (passed + failed === 0) {
		failed = 1;
		problems.push('nothing ran');
	}
	return { passed, failed, problems };
}

/** How many tests each test file holds now, without running them (a name no test has skips all). */
function currentCounts() {
	const dir = mkdtempSync(join(tmpdir(), 'clinic-test-count-'));
	try {
		const floors = {};
		for (const suite of SUITES) {
			const output = join(dir, `${suite}.json`);
			try {
				execFileSync(
					'npx',
					['jest', '--selectProjects', suite, '--testNamePattern', '^no test has this name$', '--json', '--outputFile', output],
					{ cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
				);
			} catch {
				// jest exits 1 when every test is skipped with a name pattern; the report is what counts.
			}
			const report = readJson(output);
			floors[suite] = Object.fromEntries(
				report.testResults.map((result) => [fileOf(result), result.assertionResults.length]).sort(([a], [b]) => a.localeCompare(b)),
			);
		}
		return floors;
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

if (process.argv[1] === import.meta.filename) {
	if (process.argv[2] === '--write-floors') {
		writeFileSync(FLOORS_FILE, `${JSON.stringify(currentCounts(), null, '\t')}\n`);
		console.log(`wrote ${relative(ROOT, FLOORS_FILE)}`);
	} else {
		const resultsDir = process.argv[2];
		if (!resultsDir) {
			console.error('usage: node scripts/test-summary.mjs <results dir> | --write-floors');
			process.exit(2);
		}
		const allowedSkips = existsSync(ALLOWED_SKIPS_FILE) ? readJson(ALLOWED_SKIPS_FILE) : [];
		const { passed, failed, problems } = summarise(resultsDir, readJson(FLOORS_FILE), allowedSkips);
		for (const problem of problems) console.log(problem);
		console.log(`${passed} passed, ${failed} failed`);
		process.exit(failed > 0 ? 1 : 0);
	}
}
