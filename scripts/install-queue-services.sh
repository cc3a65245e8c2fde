#!/usr/bin/env bash
# Install PostgreSQL and Redis from Debian's packages, for the queue-mode end-to-end
# tests (test/e2e/queueMode.test.ts), which start private instances of both from the
# installed binaries. Needs root (apt-get); concurrent runs wait for each other.
#
#   scripts/install-queue-services.sh
#
# Does nothing when `initdb` of a PostgreSQL server and `redis-server` are already there.
set -euo pipefail

have_postgres() {
	compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null
}
have_redis() { command -v redis-server >/dev/null || [[ -x /usr/bin/redis-server ]]; }

if have_postgres && have_redis; then exit 0; fi
if [[ "$(id -u)" != 0 ]]; then
	echo "install-queue-services: PostgreSQL and Redis are needed; run as root, or install them (Debian: apt-get install postgresql redis-server)" >&2
	exit 1
fi

exec 9>/tmp/n8n-nodes-clinic-apt.lock
flock 9
if have_postgres && have_redis; then exit 0; fi
packages=()
have_postgres || packages+=(postgresql)
have_redis || packages+=(redis-server)
echo "install-queue-services: apt-get install ${packages[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update >&2
apt-get install -y --no-install-recommends "${packages[@]}" >&2
