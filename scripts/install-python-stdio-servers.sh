#!/usr/bin/env bash
# Installs the Python MCP servers the stdio tests run through the gateway (issue 26): `mcp-server-time`
# from PyPI (pinned) into .tools/python-stdio-venv, for test/integration/stdio-python-server.test.ts,
# whose catalog entry runs `<venv>/bin/python -m mcp_server_time`. Idempotent: does nothing when the
# pinned version is already there. Needs python3 (3.10+) with venv and PyPI. Prints the venv's python on
# stdout.
set -euo pipefail

VERSION="2026.10.19"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p .tools
# The real path: .tools may be a symlink shared by several checkouts, and a venv records its own path.
venv="$(cd .tools && pwd -P)/python-stdio-venv"
# The test runs this for each database project, perhaps in two jest workers at once: one installs, the
# other waits for it and then finds the version there.
exec 9>"${venv}.lock"
flock 9
python="${venv}/bin/python"
installed() {
  "${python}" -c 'import importlib.metadata as m; print(m.version("mcp-server-time"))' 2>/dev/null
}

if [[ -x "${python}" ]] && [[ "$(installed || true)" == "${VERSION}" ]]; then
  echo "${python}"
  exit 0
fi

rm -rf "${venv}"
python3 -m venv "${venv}" >&2
"${venv}/bin/pip" install --quiet --disable-pip-version-check "mcp-server-time==${VERSION}" >&2
if [[ "$(installed || true)" != "${VERSION}" ]]; then
  echo "ERROR: ${venv} does not hold mcp-server-time ${VERSION}" >&2
  exit 1
fi
echo "${python}"
