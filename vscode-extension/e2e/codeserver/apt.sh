# Sourced by ci.sh and install.sh: installs Debian packages with apt as root, or through sudo, and
# says what to do when it can do neither (so a run without root stops with the command to type).
apt_install() {
  local runner=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      runner=(sudo)
    else
      echo "vscode-extension: the Debian packages '$*' are needed and this user can neither install them (not root) nor use sudo without a password." >&2
      echo "Install them once as root:  apt-get install -y $*   then run this again." >&2
      return 2
    fi
  fi
  "${runner[@]}" apt-get update -qq
  "${runner[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
