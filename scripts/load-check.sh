#!/usr/bin/env bash
# The whole CI run (`bash .ci/run` with CI=true) on a fresh clone of this repository's HEAD,
# with busy loops beside it, as a contributor's or CI's loaded machine would run it. Reports
# the total time, each step's and lane's time, and the machine's load while it ran.
#
#   bash scripts/load-check.sh              one busy loop, caches as they are
#   bash scripts/load-check.sh --loops 0    no load
#   bash scripts/load-check.sh --fresh      with empty caches, as on a new machine: n8n, Node 24
#                                           and every npm package downloaded anew (into the
#                                           check's own folders; yours are not touched)
#   bash scripts/load-check.sh --new-machine  --fresh, and first removes Debian's Chromium,
#                                           PostgreSQL and Redis with their data (root only), as a
#                                           new machine has none of them: the run's own scripts
#                                           install them again
set -uo pipefail
loops=1
fresh=0
new_machine=0
while [ $# -gt 0 ]; do
	case "$1" in
		--loops) loops=$2; shift 2 ;;
		--fresh) fresh=1; shift ;;
		--new-machine) fresh=1; new_machine=1; shift ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done

if [ "$new_machine" = 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "load check: --new-machine removes Debian packages: run it as root" >&2; exit 2; }
	echo "load check: removing Chromium, PostgreSQL and Redis with their data, as on a new machine"
	systemctl stop redis-server postgresql 2>/dev/null || true
	pkill -x redis-server 2>/dev/null || true
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq 'chromium*' 'postgresql*' 'redis*' >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get autoremove -y -qq --purge >/dev/null
	rm -rf /var/lib/postgresql /var/lib/redis /etc/postgresql /etc/redis
fi

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/load-check-XXXXXX)
git clone --quiet "$repo" "$work/clone"
echo "load check: $(git -C "$work/clone" log --oneline -1), $loops busy loop(s), fresh caches: $fresh, new machine: $new_machine, in $work"

# A fresh run gets caches of its own (N8N_CLINIC_CACHE, npm's cache): the user's stay as they
# are, and other npm commands running meanwhile cannot race with it.
if [ "$fresh" = 1 ]; then
	export N8N_CLINIC_CACHE="$work/n8n-cache" npm_config_cache="$work/npm-cache"
fi
restore() {
	for pid in ${busy:-} ${sampler:-}; do kill "$pid" 2>/dev/null; done
	[ "$fresh" = 1 ] && rm -rf "$work/n8n-cache" "$work/npm-cache"
}
trap restore EXIT

busy=""
for _ in $(seq 1 "$loops"); do
	sh -c 'while :; do :; done' &
	busy="$busy $!"
done
# The 1-minute load average every 15 s.
(while :; do cut -d' ' -f1 /proc/loadavg >>"$work/load"; sleep 15; done) &
sampler=$!

started=$SECONDS
(cd "$work/clone" && CI=true bash .ci/run) >"$work/ci.log" 2>&1
status=$?
elapsed=$((SECONDS - started))

results="$work/clone/.test-results"
echo "load check: .ci/run exit $status after $((elapsed / 60)) min $((elapsed % 60)) s"
[ -f "$results/lane-times" ] && awk '{ printf "  lane %-7s %5.1f min\n", $1, $2 / 60 }' "$results/lane-times"
awk '{ sum += $1; if ($1 > max) max = $1; n++ } END { if (n) printf "  load average (1 min): mean %.1f, max %.1f over %d samples\n", sum / n, max, n }' "$work/load"
node "$work/clone/scripts/e2e-report.mjs" "$results" 2>/dev/null | grep 'n8n processes'
tail -1 "$work/ci.log"
echo "full log: $work/ci.log"
exit "$status"
