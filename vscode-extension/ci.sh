#!/usr/bin/env bash
# The extension's part of the README's test command (run after the Python tests, which made the
# repository's .venv that the protocol and end-to-end tests start the server from): Node
# dependencies with npm ci, Debian's Chromium with apt when missing, a real VS Code (code-server,
# provisioned by e2e/codeserver/install.sh into ~/.cache/qwen-lsp-code-server), then build, the
# unit/protocol/webview suites, the .vsix (checked to carry the LICENSE and the bundled server), and the end-to-end tests
# in code-server. Needs Node 20+ and npm on PATH, and root or sudo for apt when a package is missing.
set -euo pipefail
cd "$(dirname "$0")"

step() { echo "== vscode-extension: $*" >&2; }
# shellcheck source=e2e/codeserver/apt.sh
. e2e/codeserver/apt.sh

if [ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  step "Chromium (apt)"
  apt_install chromium
fi

step "npm ci"
npm ci --no-audit --no-fund
step "code-server (e2e/codeserver/install.sh; a few minutes the first time, cached afterwards)"
bash e2e/codeserver/install.sh
step "build"
npm run build
step "npm test (unit, protocol against the Python server, webview in Chromium)"
npm test
step "npm run package"
npm run package
step "the .vsix carries the LICENSE and the server (bundled/launch.py, qwen_lsp, the native libraries for CPython 3.11-3.13)"
# The listing is read whole first: `grep -q` stops at the first match, and with pipefail the
# listing's broken pipe would fail the check.
listing=$(python3 -m zipfile -l qwen-lsp.vsix)
for f in LICENSE bundled/launch.py bundled/libs/common/qwen_lsp/__init__.py bundled/libs/cp311/pydantic_core/__init__.py bundled/libs/cp312/pydantic_core/__init__.py bundled/libs/cp313/pydantic_core/__init__.py; do
  grep -q "^extension/$f" <<<"$listing" || { echo "vscode-extension/ci.sh: qwen-lsp.vsix has no extension/$f" >&2; exit 1; }
done
step "npm run test:e2e (the .vsix in code-server)"
npm run test:e2e
