#!/usr/bin/env bash
# Debian's Chromium for the browser test (test/e2e/editorBrowser.test.ts), and Debian's
# ffmpeg for the demo video it records. playwright-core drives Chromium; browser downloads
# of its own are not possible here. Nothing to do when both are present.
set -euo pipefail
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
missing=()
[ -x "$chromium" ] || missing+=(chromium)
command -v ffmpeg >/dev/null || missing+=(ffmpeg)
if [ "${#missing[@]}" -gt 0 ]; then
	as_root=()
	[ "$(id -u)" = 0 ] || as_root=(sudo)
	"${as_root[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
"$chromium" --version 2>/dev/null
ffmpeg -version | head -1
