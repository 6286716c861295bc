"""A stand-in for Qwen Code's VS Code companion: an MCP server on stdio that tells the CLI what the editor shows.

Qwen Code 0.24.4 in IDE mode (``ide.enabled``, ``TERM_PROGRAM=vscode``) connects to its
companion; with ``QWEN_CODE_IDE_SERVER_STDIO_COMMAND``/``_ARGS`` it starts the companion itself
and speaks MCP over its stdin/stdout. This one answers the handshake and sends one
``ide/contextUpdate`` with the IdeContext read from the JSON file named by its argument, so a
test can give the real CLI and our server the same editor state and compare what each sends.

Usage: ``python ide_companion.py CONTEXT.json`` (started by the CLI, not by hand).
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        context = json.load(f)

    def send(message: dict) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            version = message.get("params", {}).get("protocolVersion", "2025-06-18")
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "test-companion", "version": "0"},
            }})
        elif method == "notifications/initialized":
            send({"jsonrpc": "2.0", "method": "ide/contextUpdate", "params": context})
        elif "id" in message:
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []} if method == "tools/list" else {}})


if __name__ == "__main__":
    main()
