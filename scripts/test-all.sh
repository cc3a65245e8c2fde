#!/usr/bin/env bash
# Sets up and runs every test: install, type-check, build, lint, unit and simulator
# tests (n8n's community-package scan and `n8n-node lint` among them), then the end-to-end
# tests inside real n8n (1.123 and 2.41), the editor walk in Chromium included.
# Ends with one line "N passed, N failed" over every suite it ran.
set -uo pipefail
cd "$(dirname "$0")/.."

results=.test-results
rm -rf "$results" && mkdir -p "$results"

step() { printf '\n== %s (at %d s)\n' "$*" "$SECONDS"; }
# A failed step counts one failure in the summary line; `what` names it there.
failed() { echo "$1" >>"$results/failed-steps"; }

step "install dev dependencies"
npm ci --no-audit --no-fund || { failed "npm ci"; exit 1; }

if [ "${SKIP_E2E:-}" != "1" ]; then
	# What the end-to-end tests need installs while the checks below run (minutes on a
	# fresh machine, instant when present); the end-to-end step waits for it. Debian's
	# packages one after the other (apt takes one install at a time); as root only, as the
	# queue-mode tests themselves do.
	step "n8n, Node 24, Chromium, PostgreSQL and Redis for the end-to-end tests (in the background)"
	npx ts-node --transpile-only -e "require('./test/e2e/harness/install').prepareN8n()" >"$results/install-n8n.log" 2>&1 &
	n8n_install=$!
	{
		bash scripts/install-chromium.sh && { [ "$(id -u)" != 0 ] || bash scripts/install-queue-services.sh; }
	} >"$results/install-packages.log" 2>&1 &
	packages_install=$!
fi

step "type-check and build"
npm run typecheck || failed "type-check"
npm run build || { failed "build"; node scripts/test-summary.mjs "$results"; exit 1; }

step "lint"
npm run lint || failed "lint"

step "unit, credential, node and simulator tests"
npx jest --selectProjects unit --json --outputFile="$results/unit.json"
echo $? >"$results/unit.exit"

if [ "${SKIP_E2E:-}" = "1" ] && [ -n "${CI:-}" ]; then
	# CI runs everything: a skipped suite is a failed one (its expected tests count as failed).
	failed "SKIP_E2E=1 is not allowed under CI: the end-to-end tests did not run"
elif [ "${SKIP_E2E:-}" != "1" ]; then
	step "n8n, Node 24, Chromium, PostgreSQL and Redis installed"
	wait "$n8n_install" || { cat "$results/install-n8n.log"; failed "n8n install"; }
	wait "$packages_install" || failed "Chromium, PostgreSQL or Redis install"
	cat "$results/install-packages.log"

	step "end-to-end tests in real n8n"
	# One jest process per lane: its report in .test-results/e2e-<lane>.json, its output in
	# e2e-<lane>.log; the summary counts every lane.
	# Each lane takes its ports from its own range (N8N_E2E_PORTS, test/e2e/harness/env.ts).
	# Every n8n process a test file starts is recorded (scripts/e2e-report.mjs counts them).
	export N8N_E2E_PROCESS_LOG="$PWD/$results/n8n-processes.jsonl"
	# And the CPU time each file cost (test/helpers/cpuReport.cjs).
	export N8N_E2E_CPU_LOG="$PWD/$results/cpu.jsonl"
	lane() {
		local name=$1 ports=$2 started=$SECONDS
		shift 2
		# A lane never outlives CI's bound: whatever a test does, jest is stopped after 40 minutes.
		N8N_E2E_PORTS=$ports timeout --kill-after=30s 40m npx jest --selectProjects e2e --runInBand "$@" --json --outputFile="$results/e2e-$name.json" >"$results/e2e-$name.log" 2>&1
		echo $? >"$results/e2e-$name.exit"
		echo "$name $((SECONDS - started))" >>"$results/lane-times"
	}
	# Queue mode first and alone: its sessions race between processes, so it gets the machine.
	queue='test/e2e/queueMode\.test\.ts'
	lane queue 22000-23999 --testPathPattern "$queue"
	cat "$results/e2e-queue.log"
	# Then three lanes side by side, balanced by time. Two are mostly waits on n8n's
	# one-minute polls and its restarts (little CPU), the third holds the browser and the burst.
	polls='test/e2e/(eventLogTrigger|patientData|installer|harness|aiAgent|mcp|unverifiedPackages)\.test\.ts'
	faults='test/e2e/(faults|n8n3Defaults|strictService|signInFailures)\.test\.ts'
	lane polls 24000-25999 --testPathPattern "$polls" &
	polls_lane=$!
	lane faults 26000-27999 --testPathPattern "$faults" &
	faults_lane=$!
	lane main 28000-29999 --testPathIgnorePatterns '/node_modules/' "$queue" "$polls" "$faults"
	wait "$polls_lane" "$faults_lane"
	for name in main polls faults; do cat "$results/e2e-$name.log"; done
fi

step "summary"
[ "${SKIP_E2E:-}" = "1" ] || node scripts/e2e-report.mjs "$results"
node scripts/test-summary.mjs "$results"
