#!/usr/bin/env bash
# usage: scripts/install-python-venv.sh NAME PACKAGE VERSION
# Installs PyPI PACKAGE==VERSION into .tools/NAME (a venv of its own), for tests that run a Python program
# (install-python-mcp.sh, install-python-stdio-servers.sh). Idempotent: does nothing when the pinned
# version is already there. Needs python3 (3.10+) with venv and PyPI. Prints the venv's python on stdout.
set -euo pipefail

name="$1"
package="$2"
version="$3"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p .tools
# The real path: .tools may be a symlink shared by several checkouts, and a venv records its own path.
venv="$(cd .tools && pwd -P)/${name}"
# Tests run this for each database project, perhaps in two jest workers at once: one installs, the
# other waits for it and then finds the version there.
exec 9>"${venv}.lock"
flock 9
python="${venv}/bin/python"
installed() {
  "${python}" -c "import importlib.metadata as m; print(m.version('${package}'))" 2>/dev/null
}

if [[ -x "${python}" ]] && [[ "$(installed || true)" == "${version}" ]]; then
  echo "${python}"
  exit 0
fi

rm -rf "${venv}"
python3 -m venv "${venv}" >&2
"${venv}/bin/pip" install --quiet --disable-pip-version-check "${package}==${version}" >&2
if [[ "$(installed || true)" != "${version}" ]]; then
  echo "ERROR: ${venv} does not hold ${package} ${version}" >&2
  exit 1
fi
echo "${python}"
