#!/usr/bin/env bash
# Usage: npm run bench:node24 -- NAME [ARGS…], e.g. `npm run bench:node24 -- scale --tasks 20000`.
# Runs the `bench:NAME` npm script with every process on Node 24 (the Docker image's runtime): the bench,
# the gateway, the upstreams and the bare proxy. The run happens in a checkout of the commit at HEAD made
# by scripts/node24-checkout.sh (about 2 minutes, once per commit, then reused), so it measures committed
# code only: uncommitted changes are not in that checkout. TASKROUTER_NODE24_DIR names the checkout
# (default: one per commit under the temporary directory); `git worktree remove --force DIR` removes it.
set -euo pipefail

name="${1:?usage: npm run bench:node24 -- NAME [ARGS…] (NAME of a bench:NAME script: floor, scale, proxy…)}"
shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The bench's own command line, its leading `node` to be replaced by Node 24's binary.
cmd="$(cd "${root}" && node -p "require('./package.json').scripts['bench:' + process.argv[1]] ?? ''" "${name}")"
if [[ "${cmd}" != "node "* ]]; then
  echo "bench:${name}: no such npm script that runs one bench with node (see package.json)" >&2
  exit 2
fi

rev="$(git -C "${root}" rev-parse --short=12 HEAD)"
dir="${TASKROUTER_NODE24_DIR:-${TMPDIR:-/tmp}/taskrouter-node24-${rev}}"
dir="${dir%/}"
# Written once the checkout is complete, with its commit: a checkout interrupted half way, or of another
# commit (TASKROUTER_NODE24_DIR kept across commits), is made again, not used.
ready="${dir}/.node24-ready"
if [[ "$(sed -n 2p "${ready}" 2>/dev/null)" != "${rev}" ]]; then
  if [[ -e "${dir}" ]]; then
    # Only a worktree of this repository is removed; anything else there is left alone.
    if ! git -C "${root}" worktree list --porcelain | grep -qxF "worktree $(cd "${dir}" && pwd -P)"; then
      echo "${dir} exists and is not a worktree of this repository: choose another TASKROUTER_NODE24_DIR" >&2
      exit 2
    fi
    git -C "${root}" worktree remove --force "${dir}"
  fi
  "${root}/scripts/node24-checkout.sh" "${dir}" "${rev}" > "${dir}.node"
  echo "${rev}" >> "${dir}.node"
  mv "${dir}.node" "${ready}"
fi
node24="$(sed -n 1p "${ready}")"
echo "[bench:node24] $("${node24}" --version) in ${dir} (commit ${rev})" >&2

cd "${dir}"
args=()
read -r -a args <<< "${cmd#node }"
exec "${node24}" "${args[@]}" "$@"
