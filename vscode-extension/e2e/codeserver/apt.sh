# Sourced by ci.sh and install.sh: installs Debian packages with apt as root, or through sudo, and
# says what to do when it can do neither (a run without root or sudo stops with the command to type).
apt_install() {
  local runner=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      runner=(sudo) # asks for the password on a terminal
    else
      echo "vscode-extension: the Debian packages '$*' are missing, and installing them needs root: this user is not root and there is no sudo." >&2
      echo "Install them once as root:  apt-get install -y $*   then run this again." >&2
      return 2
    fi
  fi
  "${runner[@]}" apt-get update -qq
  "${runner[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
