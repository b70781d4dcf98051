#!/usr/bin/env bash
# Installs the PostgreSQL server binaries from the Debian packages, for the test suite (which starts its own
# throwaway clusters under /tmp with src/tooling/postgres.ts). Idempotent: does nothing when
# /usr/lib/postgresql/<version>/bin already has initdb and postgres. Needs root and apt (Debian/Ubuntu).
# Called by .ci/run, and by the jest global setup when it runs as root and the binaries are missing.
set -euo pipefail

have_server() {
  local bin
  for bin in /usr/lib/postgresql/*/bin; do
    if [[ -x "${bin}/initdb" && -x "${bin}/postgres" ]]; then
      echo "PostgreSQL server binaries: ${bin}"
      return 0
    fi
  done
  return 1
}

if have_server && getent passwd postgres >/dev/null; then
  exit 0
fi

if [[ "$(id -u)" != "0" ]]; then
  echo "ERROR: installing PostgreSQL needs root: sudo $0 (or: sudo apt-get install postgresql)" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "ERROR: apt-get not found; install the PostgreSQL server (initdb, postgres) with your package manager" >&2
  exit 1
fi

# The tests run their own clusters: don't create (and start) the package's default cluster on port 5432.
mkdir -p /etc/postgresql-common/createcluster.d
cat >/etc/postgresql-common/createcluster.d/50-taskrouter-no-main.conf <<'CONF'
# Written by taskrouter scripts/install-postgres.sh: no default cluster at package installation.
create_main_cluster = false
CONF

export DEBIAN_FRONTEND=noninteractive
echo "Installing PostgreSQL from the Debian packages..."
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql >/dev/null

if ! have_server; then
  echo "ERROR: apt-get installed postgresql, but no /usr/lib/postgresql/*/bin/{initdb,postgres} was found" >&2
  exit 1
fi
getent passwd postgres >/dev/null || {
  echo "ERROR: the postgres system user is missing after installation" >&2
  exit 1
}
