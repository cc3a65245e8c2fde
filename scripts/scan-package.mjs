#!/usr/bin/env node
/**
 * n8n's community-package scan, run locally the way n8n runs it before verifying a package
 * (@n8n/scan-community-package `analyzePackageByName`, minus the registry download):
 *   source leg   the repository's package.json, nodes/ and credentials/ (SOURCE_FILE_PATTERNS)
 *   tarball leg  the `npm pack` tarball's compiled .js and its package.json
 * Both lint with inline eslint config off, so an `eslint-disable` comment hides nothing.
 *
 *   node scripts/scan-package.mjs [--json] [path/to/package.tgz]
 * Without a tarball it builds one with `npm pack --ignore-scripts` (run `npm run build` first).
 * Exits 1 when either leg fails.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { analyzePackage, SOURCE_FILE_PATTERNS } from '@n8n/scan-community-package/scanner/scanner.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const json = args.includes('--json');
const tarballArg = args.find((arg) => !arg.startsWith('--'));

const work = mkdtempSync(join(tmpdir(), 'clinic-scan-'));
try {
	let tarball = tarballArg && resolve(tarballArg);
	if (!tarball) {
		execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: root, stdio: 'pipe' });
		tarball = join(work, readdirSync(work).find((file) => file.endsWith('.tgz')));
	}
	const unpacked = join(work, 'package');
	execFileSync('tar', ['-xzf', tarball, '-C', work]);

	const legs = {
		source: await analyzePackage(root, SOURCE_FILE_PATTERNS),
		tarball: await analyzePackage(unpacked, ['**/*.js', 'package.json']),
	};
	const report = Object.fromEntries(
		Object.entries(legs).map(([leg, { passed, message, details }]) => [leg, { passed, message, details }]),
	);
	if (json) {
		process.stdout.write(`${JSON.stringify(report)}\n`);
	} else {
		for (const [leg, result] of Object.entries(report)) {
			console.log(`${result.passed ? 'passed' : 'FAILED'}: ${leg}${result.message ? ` (${result.message})` : ''}`);
			if (result.details) console.log(result.details);
		}
	}
	process.exitCode = Object.values(report).every((result) => result.passed) ? 0 : 1;
} finally {
	rmSync(work, { recursive: true, force: true });
}
