#!/usr/bin/env bash
# Installs Chromium from the Debian packages for the dashboard's browser tests (driven by playwright-core,
# which never downloads a browser here: the tests launch this executable). Idempotent: does nothing when a
# Chromium executable is already found. Needs root and apt (Debian/Ubuntu).
# Called by .ci/run, and by the jest global setup when it runs as root and Chromium is missing.
set -euo pipefail

find_chromium() {
  local candidate
  for candidate in "${TASKROUTER_CHROMIUM_PATH:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
    if [[ -n "${candidate}" && -x "${candidate}" ]]; then
      echo "Chromium: ${candidate} ($("${candidate}" --version 2>/dev/null || echo 'version unknown'))"
      return 0
    fi
  done
  return 1
}

if find_chromium; then
  exit 0
fi

# shellcheck source=scripts/apt-packages.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-packages.sh"
require_root_and_apt Chromium 'sudo apt-get install chromium' \
  'install Chromium and set TASKROUTER_CHROMIUM_PATH to its executable'
# Fonts so screenshots render text; chromium's own dependencies come with it.
apt_install Chromium chromium fonts-dejavu-core

if ! find_chromium; then
  echo "ERROR: apt-get installed chromium, but no /usr/bin/chromium was found" >&2
  exit 1
fi
