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

if [ "${SKIP_E2E:-}" != "1" ]; then
	# What the end-to-end tests need installs while the steps below run (minutes on a
	# fresh machine, instant when present); the end-to-end step waits for it. Debian's
	# packages one after the other (apt takes one install at a time); as root only, as the
	# queue-mode tests themselves do.
	step "n8n, Node 24, Chromium, PostgreSQL and Redis for the end-to-end tests (in the background)"
	bash scripts/install-n8n.sh $(node -p "Object.values(require('./test/e2e/harness/n8nVersions.json')).join(' ')") >"$results/install-n8n.log" 2>&1 &
	n8n_install=$!
	{
		bash scripts/install-chromium.sh && { [ "$(id -u)" != 0 ] || bash scripts/install-queue-services.sh; }
	} >"$results/install-packages.log" 2>&1 &
	packages_install=$!
fi

step "install dev dependencies"
npm ci --no-audit --no-fund || { failed "npm ci"; exit 1; }

step "type-check and build"
npm run typecheck || failed "type-check"
npm run build || { failed "build"; node scripts/test-summary.mjs "$results"; exit 1; }

step "lint"
npm run lint || failed "lint"

step "unit, credential, node and simulator tests"
# At least two workers: a unit test file waits on its simulator more than it computes (one
# worker keeps a core about 60% busy), and jest's default on two cores is one.
workers=$(($(nproc) > 3 ? $(nproc) - 1 : 2))
npx jest --selectProjects unit --maxWorkers="$workers" --json --outputFile="$results/unit.json"
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
	# A lane is a list of test files run one after the other, in that order, by one jest
	# process (test/e2e/harness/laneSequencer.cjs), with its own range of ports.
	lane() {
		local name=$1 ports=$2 files=$3 started=$SECONDS
		local pattern="test/e2e/(${files// /|})"
		pattern=${pattern//.test.ts/\\.test\\.ts}
		# A lane never outlives CI's bound: whatever a test does, jest is stopped after 40 minutes.
		E2E_LANE_FILES=$files N8N_E2E_PORTS=$ports timeout --kill-after=30s 40m \
			npx jest --selectProjects e2e --runInBand --testSequencer ./test/e2e/harness/laneSequencer.cjs \
			--testPathPatterns "$pattern" --json --outputFile="$results/e2e-$name.json" >"$results/e2e-$name.log" 2>&1
		echo $? >"$results/e2e-$name.exit"
		echo "$name $((SECONDS - started))" >>"$results/lane-times"
	}
	# Five lanes side by side on two cores, then a sixth, planned from what each file costs (wall time and
	# CPU, scripts/e2e-report.mjs): most files wait on n8n's one-minute polls, its restarts and
	# the simulator. The files that keep a core busy (queue mode's cluster, the trigger's
	# restarts, the browser) are in two lanes, so that at most two run at once, and
	# each lane starts with its heaviest file. Files marked `laneServer` share one n8n a
	# version within their lane (test/e2e/harness/laneServer.ts): the faults and cursor lanes.
	cluster="queueMode.test.ts getBody.test.ts strictService.test.ts clinicTrigger.test.ts"
	# The faults file alone takes about 13 minutes, most of it waiting: the short files that share a lane's n8n follow it.
	faults="faults.test.ts parallelRequests.test.ts aiAgent.test.ts mcp.test.ts signInFailures.test.ts"
	cursor="clinicTriggerCursor.test.ts clinicActions.test.ts patientData.test.ts triggerResubscribe.test.ts"
	polls="eventLogTrigger.test.ts n8n3Defaults.test.ts harness.test.ts"
	# The browser walk alone takes about 12 minutes; the lane ends first all the same. The crash test's restarts would
	# load the browser, and the installer is timed by n8n's REST answers: they come after it, when the other lanes are
	# in their last, short files.
	editor="editorBrowser.test.ts demo.test.ts unverifiedPackages.test.ts clinicTriggerCrash.test.ts installer.test.ts"
	# The sixth lane starts once the cluster and cursor lanes are done (about 12 minutes in), beside the last minutes of
	# the other three (their short files, and the installer): the burst of 600 deliveries keeps both cores busy (beside
	# all five lanes, n8n 2.41's SQLite pool starves and its runs stay unfinished), and after the editor lane, the longest,
	# it would add its 2 minutes to the run.
	alone="clinicTriggerBurst.test.ts"
	# Every test file is in exactly one lane (a file left out would never run).
	for file in test/e2e/*.test.ts; do
		count=$(printf '%s\n' $cluster $faults $cursor $polls $editor $alone | grep -cx "$(basename "$file")")
		[ "$count" = 1 ] || failed "e2e lanes: $(basename "$file") is in $count lanes (scripts/test-all.sh)"
	done
	lane cluster 22000-23999 "$cluster" &
	cluster_lane=$!
	lane faults 24000-25999 "$faults" &
	faults_lane=$!
	lane cursor 30000-31999 "$cursor" &
	cursor_lane=$!
	lane polls 26000-27999 "$polls" &
	polls_lane=$!
	lane editor 28000-29999 "$editor" &
	editor_lane=$!
	wait "$cluster_lane" "$cursor_lane"
	# The cursor lane's ports are free again.
	lane alone 30000-31999 "$alone"
	wait "$faults_lane" "$polls_lane" "$editor_lane"
	for name in cluster faults cursor polls editor alone; do cat "$results/e2e-$name.log"; done
fi

step "summary"
[ "${SKIP_E2E:-}" = "1" ] || node scripts/e2e-report.mjs "$results"
node scripts/test-summary.mjs "$results"
