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

if [[ "$(id -u)" != "0" ]]; then
  echo "ERROR: installing Chromium needs root: sudo $0 (or: sudo apt-get install chromium)" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "ERROR: apt-get not found; install Chromium and set TASKROUTER_CHROMIUM_PATH to its executable" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "Installing Chromium from the Debian packages..."
apt-get update -qq
# Fonts so screenshots render text; chromium's own dependencies come with it.
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null

if ! find_chromium; then
  echo "ERROR: apt-get installed chromium, but no /usr/bin/chromium was found" >&2
  exit 1
fi
