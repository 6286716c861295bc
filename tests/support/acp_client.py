"""A minimal Agent Client Protocol client, to drive ``qwen --acp`` the way an editor does.

The CLI's permission requests (``session/request_permission``) are answered with the
option of the kind asked for (``reject_once`` is a user's "no"); any other request from
the agent is refused. Newline-delimited JSON-RPC over the child's stdin/stdout.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any


class AcpSession:
    def __init__(self, qwen: str, cwd: Path, env: dict[str, str], answer_kind: str = "reject_once", timeout: float = 120) -> None:
        self.asked: list[dict[str, Any]] = []
        self._answer_kind = answer_kind
        self._timeout = timeout
        self._next = 0
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._proc = subprocess.Popen(
            [qwen, "--acp", "--auth-type", "openai"], cwd=cwd, env=env, text=True, bufsize=1,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        threading.Thread(target=self._read, daemon=True).start()
        self._call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        self.session_id = self._call("session/new", {"cwd": str(cwd), "mcpServers": []})["sessionId"]

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _send(self, message: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self._proc.stdin.flush()

    def _call(self, method: str, params: dict[str, Any]) -> Any:
        self._next += 1
        call_id = self._next
        self._send({"id": call_id, "method": method, "params": params})
        while True:
            line = self._lines.get(timeout=self._timeout)
            if line is None:
                raise RuntimeError(f"qwen --acp exited: {self._stderr()}")
            message = json.loads(line)
            if message.get("id") == call_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            if message.get("method") == "session/request_permission":
                self.asked.append(message["params"])
                option = next(o["optionId"] for o in message["params"]["options"] if o["kind"] == self._answer_kind)
                self._send({"id": message["id"], "result": {"outcome": {"outcome": "selected", "optionId": option}}})
            elif "method" in message and "id" in message:
                self._send({"id": message["id"], "error": {"code": -32601, "message": "not supported by this client"}})

    def prompt(self, text: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("session/prompt", {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]})
        return result

    def _stderr(self) -> str:
        try:
            return (self._proc.stderr.read() if self._proc.stderr else "")[-2000:]
        except ValueError:
            return ""

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
