# Sourced by the scripts that install Debian packages for the test suite (install-chromium.sh,
# install-postgres.sh): the checks that installing can go ahead, and the quiet install itself.

# require_root_and_apt WHAT ROOT_ALTERNATIVE NO_APT_ADVICE: exits 1 saying why unless this runs as root
# with apt-get (ROOT_ALTERNATIVE: the manual command; NO_APT_ADVICE: what to do without apt).
require_root_and_apt() {
  if [[ "$(id -u)" != "0" ]]; then
    echo "ERROR: installing $1 needs root: sudo $0 (or: $2)" >&2
    exit 1
  fi
  if ! command -v apt-get >/dev/null; then
    echo "ERROR: apt-get not found; $3" >&2
    exit 1
  fi
}

# apt_install WHAT PACKAGE...: installs the packages from the Debian archive, without recommends, quietly.
apt_install() {
  local what="$1"
  shift
  export DEBIAN_FRONTEND=noninteractive
  echo "Installing ${what} from the Debian packages..."
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
