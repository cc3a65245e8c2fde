/**
 * The summary line of `npm run test:all` (scripts/test-summary.mjs) cannot say more than what
 * ran: fed jest reports shaped like the real ones, it counts what is missing as failed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const floors = JSON.parse(readFileSync(join(ROOT, 'test', 'expectedTests.json'), 'utf8')) as Record<string, Record<string, number>>;
const expectedIn = (suite: string) => Object.values(floors[suite]).reduce((sum, count) => sum + count, 0);
const total = Object.keys(floors).reduce((sum, suite) => sum + expectedIn(suite), 0);

type Status = 'passed' | 'failed' | 'pending' | 'todo';
interface Report {
	numPassedTests: number;
	numFailedTests: number;
	numRuntimeErrorTestSuites: number;
	testResults: Array<{ name: string; assertionResults: Array<{ fullName: string; status: Status }> }>;
}

/** A jest --json report in which every expected test ran and passed. */
function fullReport(suite: string): Report {
	const testResults = Object.entries(floors[suite]).map(([file, count]) => ({
		name: join(ROOT, file),
		assertionResults: Array.from({ length: count }, (_, i) => ({ fullName: `${file} test ${i}`, status: 'passed' as Status })),
	}));
	return { numPassedTests: expectedIn(suite), numFailedTests: 0, numRuntimeErrorTestSuites: 0, testResults };
}

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), 'clinic-summary-'));
	for (const suite of Object.keys(floors)) {
		writeFileSync(join(dir, `${suite}.json`), JSON.stringify(fullReport(suite)));
		writeFileSync(join(dir, `${suite}.exit`), '0\n');
	}
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function summary(): { line: string; output: string; exitCode: number } {
	let output: string;
	let exitCode = 0;
	try {
		output = execFileSync('node', [join(ROOT, 'scripts', 'test-summary.mjs'), dir], { encoding: 'utf8' });
	} catch (error) {
		const failure = error as { stdout: string; status: number };
		output = failure.stdout;
		exitCode = failure.status;
	}
	const lines = output.trim().split('\n');
	return { line: lines[lines.length - 1], output, exitCode };
}

const edit = (suite: string, change: (report: Report) => void) => {
	const report = JSON.parse(readFileSync(join(dir, `${suite}.json`), 'utf8')) as Report;
	change(report);
	writeFileSync(join(dir, `${suite}.json`), JSON.stringify(report));
};

test('every expected test ran and passed: all passed, exit 0', () => {
	expect(summary()).toMatchObject({ line: `${total} passed, 0 failed`, exitCode: 0 });
});

test('a suite that left no report (skipped, or its global setup crashed) counts its expected tests as failed', () => {
	unlinkSync(join(dir, 'e2e.json'));
	const { line, output, exitCode } = summary();
	expect(line).toBe(`${expectedIn('unit')} passed, ${expectedIn('e2e')} failed`);
	expect(output).toContain('e2e: no report');
	expect(exitCode).toBe(1);
});

test('a deleted test file counts its tests as failed', () => {
	const [file, count] = Object.entries(floors.e2e)[0];
	edit('e2e', (report) => {
		report.testResults = report.testResults.filter((result) => !result.name.endsWith(file));
		report.numPassedTests -= count;
	});
	const { line, output } = summary();
	expect(line).toBe(`${total - count} passed, ${count} failed`);
	expect(output).toContain(`${file} ran 0 tests, ${count} expected`);
});

test('a skipped or todo test counts as failed unless allow-listed', () => {
	edit('unit', (report) => {
		report.testResults[0].assertionResults[0].status = 'pending';
		report.testResults[1].assertionResults[0].status = 'todo';
		report.numPassedTests -= 2;
	});
	const { line, output } = summary();
	expect(line).toBe(`${total - 2} passed, 2 failed`);
	expect(output).toMatch(/was skipped/);
	expect(output).toMatch(/was a todo/);
});

test('a suite that exited non-zero with nothing failed in its report counts one failure', () => {
	writeFileSync(join(dir, 'e2e.exit'), '1\n');
	expect(summary().line).toBe(`${total} passed, 1 failed`);
});

test('each failed step (type-check, lint, SKIP_E2E under CI) counts one failure', () => {
	writeFileSync(join(dir, 'failed-steps'), 'lint\ntype-check\n');
	const { line, output } = summary();
	expect(line).toBe(`${total} passed, 2 failed`);
	expect(output).toContain('step failed: lint');
});

describe('a suite run in two jest processes side by side', () => {
	/** Splits the e2e report in two lanes: e2e.json and e2e-polls.json. */
	const splitE2e = (failInSecond = false) => {
		const report = fullReport('e2e');
		const [first, second] = [report.testResults.slice(0, 2), report.testResults.slice(2)];
		const countOf = (results: Report['testResults']) => results.reduce((sum, result) => sum + result.assertionResults.length, 0);
		if (failInSecond) second[0].assertionResults[0].status = 'failed';
		writeFileSync(join(dir, 'e2e.json'), JSON.stringify({ ...report, testResults: first, numPassedTests: countOf(first) }));
		writeFileSync(
			join(dir, 'e2e-polls.json'),
			JSON.stringify({ ...report, testResults: second, numPassedTests: countOf(second) - (failInSecond ? 1 : 0), numFailedTests: failInSecond ? 1 : 0 }),
		);
		writeFileSync(join(dir, 'e2e-polls.exit'), failInSecond ? '1\n' : '0\n');
	};

	it('counts both reports as one suite', () => {
		splitE2e();
		expect(summary().line).toBe(`${total} passed, 0 failed`);
	});

	it('a failure in the second process is counted', () => {
		splitE2e(true);
		const { line, exitCode } = summary();
		expect(line).toBe(`${total - 1} passed, 1 failed`);
		expect(exitCode).toBe(1);
	});
});
