"""A bare-bones LSP peer over the real server's stdio, to send what a real client never would.

Bytes go out exactly as given (wrong lengths, garbage, 50 MB bodies); the
server's stderr goes to a file the test can read (a pipe nobody reads would
fill up and block the server).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .quiet_home import write_quiet_settings


def frame(obj: Any = None, raw: bytes | None = None, length: int | None = None) -> bytes:
    """One LSP message: ``Content-Length`` (``length`` to lie about it) and the body."""
    body = raw if raw is not None else json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


class RawPeer:
    def __init__(
        self,
        home: Path,
        root: Path,
        *,
        initialize: bool = True,
        env: dict[str, str] | None = None,
        command: list[str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        """``command`` starts the server some other way than ``python -m qwen_lsp serve --stdio``, in ``cwd``."""
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "QWEN_", "DASHSCOPE_"))}
        clean["HOME"] = str(home)
        clean.update(env or {})
        if not (home / ".qwen" / "settings.json").exists():  # as the suite's ``home`` fixture
            write_quiet_settings(home)
        self.stderr_path = home / "server-stderr.log"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            command or [sys.executable, "-m", "qwen_lsp", "serve", "--stdio"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=clean,
        )
        self.root = root
        self.notifications: list[dict[str, Any]] = []
        self._answers: dict[Any, dict[str, Any]] = {}
        if initialize:
            self.initialize()

    def initialize(self, msg_id: int = 0) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": {"capabilities": {}, "rootUri": self.root.as_uri()}})
        answer = self.response(msg_id)
        assert answer["result"]["capabilities"]["experimental"]["qwen"]["chatEvents"] is True
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return answer

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj: Any = None, raw: bytes | None = None, length: int | None = None) -> None:
        self.write(frame(obj, raw, length))

    def request(self, msg_id: int, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params if params is not None else {}})

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        length = None
        while True:
            line = self.proc.stdout.readline()
            assert line, f"server closed its output; stderr:\n{self.stderr()[-3000:]}"
            if line == b"\r\n" and length is not None:
                return json.loads(self.proc.stdout.read(length))
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])

    def response(self, msg_id: int | str) -> dict[str, Any]:
        """The answer to ``msg_id``; other answers and notifications met on the way are kept."""
        while msg_id not in self._answers:
            msg = self.read()
            if "method" not in msg:
                self._answers[msg.get("id")] = msg
            elif "id" not in msg:
                self.notifications.append(msg)
        return self._answers.pop(msg_id)

    def alive(self, msg_id: int = 999) -> bool:
        self.request(msg_id, "qwen/skills/list")
        return "result" in self.response(msg_id)

    def stderr(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def status_kb(self, field: str = "VmRSS") -> int:
        """A ``/proc/<pid>/status`` figure of the server (Linux), in kB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise AssertionError(f"{field} not in /proc/{self.proc.pid}/status")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        self._stderr.close()
