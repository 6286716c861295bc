"""Start the real server as a subprocess and talk to it as an LSP client would.

Built on pytest-lsp's client (``ClientServerConfig.start``) so the server's
stderr is forwarded and protocol checks apply, but with an environment built
per test (a scratch HOME, the scripted model's URL), which the decorator form
of ``pytest_lsp.fixture`` cannot do.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

SERVER_COMMAND = [sys.executable, "-m", "qwen_lsp", "serve", "--stdio"]


def server_env(home: Path, base_url: str | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    env["HOME"] = str(home)
    if base_url is not None:
        env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="test-key", OPENAI_MODEL="scripted-model")
    env.update(extra)
    return env


@dataclass
class Recorded:
    chat_events: list[Any] = field(default_factory=list)
    context_status: list[Any] = field(default_factory=list)
    skills_changed: list[Any] = field(default_factory=list)
    memory_changed: list[Any] = field(default_factory=list)


async def start_client(env: dict[str, str]) -> tuple[LanguageClient, Recorded]:
    client = await ClientServerConfig(server_command=SERVER_COMMAND, server_env=env).start()
    rec = Recorded()
    for method, sink in (
        ("qwen/chatEvent", rec.chat_events),
        ("qwen/contextStatus", rec.context_status),
        ("qwen/skillsChanged", rec.skills_changed),
        ("qwen/memoryChanged", rec.memory_changed),
    ):
        client.feature(method)(_appender(sink))
    return client, rec


def _appender(sink: list[Any]):  # pygls needs a real function to tag
    def append(params: Any) -> None:
        sink.append(params)

    return append


async def initialize(client: LanguageClient, workspace: Path, options: dict[str, Any] | None = None) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True),
                workspace=types.WorkspaceClientCapabilities(configuration=True),
            ),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)],
            initialization_options=options,
        )
    )


@contextlib.asynccontextmanager
async def running_server(
    home: Path, workspace: Path, base_url: str | None, options: dict[str, Any] | None = None
) -> AsyncIterator[LanguageClient]:
    """A started, initialized server; ``client.rec`` holds the recorded notifications."""
    client, rec = await start_client(server_env(home, base_url))
    try:
        await initialize(client, workspace, options)
        client.rec = rec
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


def open_doc(client: LanguageClient, path: Path, language: str = "python") -> None:
    """``textDocument/didOpen`` for a file on disk, with its current text."""
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=path.as_uri(), language_id=language, version=1, text=path.read_text())
        )
    )


async def wait_for(predicate: Any, what: str, timeout: float = 10.0) -> None:
    """Poll ``predicate`` until true; ``timeout`` is a hang detector, never an assertion about speed."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def chat(client: LanguageClient, prompt: str, **params: Any) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async("qwen/chat", {"prompt": prompt, **params}), 30)


def as_dict(obj: Any) -> Any:
    """pygls hands custom results back as namedtuples; turn them into plain data."""
    if hasattr(obj, "_asdict"):
        return {k: as_dict(v) for k, v in obj._asdict().items()}
    if isinstance(obj, (list, tuple)):
        return [as_dict(v) for v in obj]
    return obj


def session_records(home: Path, session_id: str) -> list[dict[str, Any]]:
    files = list((home / ".qwen" / "projects").glob(f"*/chats/{session_id}.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]
