#!/usr/bin/env bash
# The extension's part of the README's test command (run after the Python tests, which made the
# repository's .venv that the protocol and end-to-end tests start the server from): Node
# dependencies with npm ci, Debian's Chromium with apt when missing, code-server with the shared
# install script, then build, the unit/protocol/webview suites, the .vsix, and the end-to-end
# test in code-server. Needs Node 20+ and npm on PATH; installs nothing outside registries.
set -euo pipefail
cd "$(dirname "$0")"
REPO=$(cd .. && pwd)

step() { echo "== vscode-extension: $*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# code-server's install.sh and start.sh live beside the repository, not in it.
export CODE_SERVER_TOOLS=${CODE_SERVER_TOOLS:-$REPO/../shared/tools/code-server}
if [ ! -f "$CODE_SERVER_TOOLS/install.sh" ] || [ ! -f "$CODE_SERVER_TOOLS/start.sh" ]; then
  echo "vscode-extension/ci.sh: code-server's install.sh and start.sh are not in $CODE_SERVER_TOOLS." >&2
  echo "Set CODE_SERVER_TOOLS to the folder that has them (default: ../shared/tools/code-server beside the repository)." >&2
  exit 2
fi

if [ ! -x /usr/bin/chromium ]; then
  step "Chromium (apt)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

step "npm ci"
npm ci --no-audit --no-fund
step "code-server (shared install script; a few minutes the first time)"
bash "$CODE_SERVER_TOOLS/install.sh"
step "build"
npm run build
step "npm test (unit, protocol against the Python server, webview in Chromium)"
npm test
step "npm run package"
npm run package
step "npm run test:e2e (the .vsix in code-server)"
npm run test:e2e
