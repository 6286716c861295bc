"""The real server as a subprocess that a test can SIGKILL at any moment, driven by a minimal LSP client.

pytest-lsp's client owns its subprocess and expects an orderly shutdown; the
crash tests need the opposite: requests left in flight, then ``kill -9``.
This client frames JSON-RPC by hand over the process's pipes, answers the
server's own requests as an editor that allows every edit would
(``qwen/permission`` → allow, ``workspace/applyEdit`` → written to disk), and
records notifications.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

SERVER_COMMAND = [sys.executable, "-m", "qwen_lsp", "serve", "--stdio"]

CAPABILITIES: dict[str, Any] = {
    "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]}},
    "experimental": {"qwen": {"permissionRequests": True}},
}


class ServerGone(Exception):
    """The server's output closed before the answer came (it was killed, or died)."""


class ServerProcess:
    """One ``qwen-lsp serve --stdio`` process; :meth:`kill` is ``kill -9``."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.pid = proc.pid
        self.notifications: list[tuple[str, Any]] = []
        self.asked: list[str] = []
        """Methods of the requests the server sent us, in order."""
        self.hold: set[str] = set()
        """Server requests left unanswered (an editor still showing the question when the kill comes)."""
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def start(cls, env: dict[str, str], workspace: Path, options: dict[str, Any] | None = None, *, log: Path | None = None) -> ServerProcess:
        stderr = open(log, "ab") if log is not None else asyncio.subprocess.DEVNULL  # noqa: SIM115 - the child keeps its own copy
        try:
            proc = await asyncio.create_subprocess_exec(
                *SERVER_COMMAND, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env, cwd=workspace
            )
        finally:
            if log is not None:
                stderr.close()  # type: ignore[union-attr]
        server = cls(proc)
        await server.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": CAPABILITIES,
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
                "initializationOptions": options,
            },
        )
        server.notify("initialized", {})
        return server

    # ------------------------------------------------------------------ messages
    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        with contextlib.suppress(ConnectionError, RuntimeError):
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def send_request(self, method: str, params: Any) -> asyncio.Future[Any]:
        """Send a request and return the future of its result (an error response raises RuntimeError)."""
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self._reader.done():
            future.set_exception(ServerGone(f"{method}: the server is gone"))
            return future
        self._pending[self._next_id] = future
        future.add_done_callback(_retrieve)  # a request left in flight by a kill is expected to fail
        self._send({"id": self._next_id, "method": method, "params": params})
        return future

    async def request(self, method: str, params: Any, timeout: float = 60.0) -> Any:
        return await asyncio.wait_for(self.send_request(method, params), timeout)

    async def _read_loop(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            while True:
                length = 0
                while (line := await stdout.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode("ascii").partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                if not length:
                    break
                self._dispatch(json.loads(await stdout.readexactly(length)))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ServerGone("the server's output closed"))
            self._pending.clear()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.asked.append(message["method"])
            if message["method"] in self.hold:
                return
            self._send({"id": message["id"], "result": self._answer(message["method"], message.get("params"))})
        elif "method" in message:
            self.notifications.append((message["method"], message.get("params")))
        else:
            future = self._pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(RuntimeError(f"{message['error'].get('code')}: {message['error'].get('message')}"))
                else:
                    future.set_result(message.get("result"))

    def _answer(self, method: str, params: Any) -> Any:
        if method == "qwen/permission":
            return {"decision": "allow"}
        if method == "workspace/applyEdit":
            apply_edit(params["edit"])
            return {"applied": True}
        return None

    def chat_texts(self) -> str:
        """The answer text the user has seen so far (every ``text`` chat event)."""
        return "".join(p.get("text") or "" for m, p in self.notifications if m == "qwen/chatEvent" and p.get("kind") == "text")

    # ------------------------------------------------------------------ endings
    async def kill(self) -> None:
        """``kill -9``: no shutdown, no flush, no cleanup of any kind."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        await self.proc.wait()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def close(self) -> None:
        """An orderly ``shutdown`` and ``exit``; a kill when the server does not comply in time."""
        try:
            await self.request("shutdown", None, timeout=20)
            self.notify("exit", None)
            await asyncio.wait_for(self.proc.wait(), 20)
        except (ServerGone, asyncio.TimeoutError, RuntimeError):
            pass
        await self.kill()


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def uri_path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def apply_edit(edit: dict[str, Any]) -> None:
    """Apply the server's ``WorkspaceEdit`` as an editor would (whole-text replacements and file creation)."""
    for change in edit.get("documentChanges") or []:
        if change.get("kind") == "create":
            uri_path(change["uri"]).touch()
            continue
        path = uri_path(change["textDocument"]["uri"])
        for text_edit in change["edits"]:
            path.write_text(text_edit["newText"])
    for uri, edits in (edit.get("changes") or {}).items():
        for text_edit in edits:
            uri_path(uri).write_text(text_edit["newText"])
