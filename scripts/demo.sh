#!/usr/bin/env bash
# The package's main job, from a fresh clone: real n8n with this package installed as a
# community package, the bundled simulator of the clinic service, credentials and the
# example workflows loaded. Prints the editor URL; Ctrl+C stops everything.
#   npm run demo                    n8n 2.41.1
#   npm run demo -- --n8n 1.123.81  another n8n version
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/ts-node ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund
fi
exec node_modules/.bin/ts-node --transpile-only scripts/demo.ts "$@"
