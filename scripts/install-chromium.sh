#!/usr/bin/env bash
# Debian's Chromium for the browser test (test/e2e/editor-browser.test.ts). playwright-core
# drives it; browser downloads of its own are not possible here. Nothing to do when present.
set -euo pipefail
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
	as_root=()
	[ "$(id -u)" = 0 ] || as_root=(sudo)
	"${as_root[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq chromium >/dev/null
fi
"$chromium" --version 2>/dev/null
