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

# shellcheck source=scripts/apt-packages.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-packages.sh"
require_root_and_apt PostgreSQL 'sudo apt-get install postgresql' \
  'install the PostgreSQL server (initdb, postgres) with your package manager'

# The tests run their own clusters: don't create (and start) the package's default cluster on port 5432.
mkdir -p /etc/postgresql-common/createcluster.d
cat >/etc/postgresql-common/createcluster.d/50-taskrouter-no-main.conf <<'CONF'
# Written by taskrouter scripts/install-postgres.sh: no default cluster at package installation.
create_main_cluster = false
CONF

apt_install PostgreSQL postgresql

if ! have_server; then
  echo "ERROR: apt-get installed postgresql, but no /usr/lib/postgresql/*/bin/{initdb,postgres} was found" >&2
  exit 1
fi
getent passwd postgres >/dev/null || {
  echo "ERROR: the postgres system user is missing after installation" >&2
  exit 1
}
