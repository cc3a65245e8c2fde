#!/usr/bin/env bash
# Sets up and runs every test: install, type-check, build, lint, unit and simulator
# tests (n8n's community-package scan and `n8n-node lint` among them), then the end-to-end
# tests inside real n8n (1.123 and 2.41), the editor walk in Chromium included.
# Ends with one line "N passed, N failed" over every suite it ran.
set -uo pipefail
cd "$(dirname "$0")/.."

results=.test-results
rm -rf "$results" && mkdir -p "$results"
status=0

step() { printf '\n== %s\n' "$*"; }

step "install dev dependencies"
npm ci --no-audit --no-fund || exit 1

step "type-check and build"
npm run typecheck || status=1
npm run build || exit 1

step "lint"
npm run lint || status=1

step "unit, credential, node and simulator tests"
npx jest --selectProjects unit --json --outputFile="$results/unit.json" || status=1

if [ "${SKIP_E2E:-}" != "1" ]; then
	step "Chromium for the editor test"
	bash scripts/install-chromium.sh || status=1

	step "end-to-end tests in real n8n"
	npx jest --selectProjects e2e --runInBand --json --outputFile="$results/e2e.json" || status=1
fi

node -e '
	const fs = require("fs");
	let passed = 0, failed = 0;
	for (const file of fs.readdirSync(process.argv[1])) {
		const report = JSON.parse(fs.readFileSync(process.argv[1] + "/" + file, "utf8"));
		passed += report.numPassedTests;
		failed += report.numFailedTests + report.numRuntimeErrorTestSuites;
	}
	if (passed + failed === 0) failed = 1;
	console.log(`${passed} passed, ${failed} failed`);
' "$results" || status=1

exit $status
