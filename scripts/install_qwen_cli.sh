#!/usr/bin/env bash
# Provisions the reference Qwen Code CLI for the interop tests (tests/interop/): @qwen-code/qwen-code
# at the version qwen-lsp follows, from the npm registry, into one cache folder reused by later runs:
#   $QWEN_LSP_QWEN_CLI_DIR, else ${XDG_CACHE_HOME:-~/.cache}/qwen-lsp-qwen-cli
# Prints the path of its `qwen` executable on its last line. Under a minute the first time, nothing
# afterwards (a stamp file names the installed version). Needs Node 20+ and npm on PATH.
set -euo pipefail
VERSION=0.24.4
DIR=${QWEN_LSP_QWEN_CLI_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qwen-lsp-qwen-cli}
BIN="$DIR/node_modules/.bin/qwen"
stamp="$DIR/installed-qwen-code-$VERSION"
if [ -f "$stamp" ] && [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
mkdir -p "$DIR"
log="$DIR/install.log"
echo "qwen CLI install: @qwen-code/qwen-code@$VERSION (npm) into $DIR" >&2
if ! npm install --prefix "$DIR" --no-audit --no-fund --no-save --loglevel=error "@qwen-code/qwen-code@$VERSION" >"$log" 2>&1; then
  echo "qwen CLI install failed; the log is $log" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
"$BIN" --version >>"$log" 2>&1 || { echo "qwen CLI install: $BIN does not run; the log is $log" >&2; exit 1; }
touch "$stamp"
echo "$BIN"
