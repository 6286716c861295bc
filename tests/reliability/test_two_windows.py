"""Two servers (two editor windows) on one project, remembering and chatting at the same time.

``tests/memory/test_concurrency.py`` proves the memory store's cross-process
lock with two bare writer processes; this runs two real servers over stdio,
so the requests, the engine and the session recorder are in the path too,
and mixes project memories, user memories (shared by every project) and chat
turns in both windows at once.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import server_env
from qwen_lsp.llm.content import visible_text
from qwen_lsp.memory.scan import parse_memory
from qwen_lsp.memory.store import MemoryStore
from qwen_lsp.sessions.reader import build_conversation, read_records
from qwen_lsp.sessions.files import session_path
from reliability.campaign import index_targets
from reliability.lsp_process import ServerProcess

MEMORIES = 24
"""Per window; every fourth goes to user scope."""
TURNS = 6


async def window(server: ServerProcess, tag: str) -> str:
    """Remember and chat interleaved; returns the session id of the window's chat."""
    session_id: str | None = None
    remembering = [
        server.request(
            "qwen/memory/remember",
            {"text": f"Shared convention {i}\n\nwritten by {tag}", "name": f"Shared convention {i}", "scope": "user" if i % 4 == 0 else "project"},
        )
        for i in range(MEMORIES)
    ]
    pending = asyncio.gather(*remembering)
    for turn in range(TURNS):
        params = {"prompt": f"{tag} turn {turn}"}
        if session_id is not None:
            params["sessionId"] = session_id
        session_id = (await server.request("qwen/chat", params))["sessionId"]
    await pending
    assert session_id is not None
    return session_id


async def test_two_servers_on_one_project_lose_and_corrupt_nothing(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    scripted.default = Reply(chunks=["answer ", "in ", "pieces"], delay=0.002)
    env = server_env(home, scripted.base_url)
    servers = await asyncio.gather(ServerProcess.start(env, workspace), ServerProcess.start(env, workspace))
    try:
        sessions = await asyncio.gather(window(servers[0], "alpha"), window(servers[1], "beta"))
    finally:
        await asyncio.gather(*(s.close() for s in servers))

    store = MemoryStore(workspace.resolve(), home=home, env={})
    for scope, per_window in (("project", MEMORIES - MEMORIES // 4), ("user", MEMORIES // 4)):
        root = store.root(scope)
        docs = store.scan(scope)
        expected = {f"Shared convention {i}\n\nwritten by {tag}" for i in range(MEMORIES) if (i % 4 == 0) == (scope == "user") for tag in ("alpha", "beta")}
        assert len(docs) == 2 * per_window and {d.body for d in docs} == expected, scope
        for path in root.rglob("*.md"):
            if path.name != "MEMORY.md":
                assert parse_memory(path.read_text(encoding="utf-8")) is not None, path
        assert set(index_targets(store.index_text(scope))) == {d.relative_path for d in docs}, scope
        leftovers = [name for _dir, _sub, files in os.walk(root) for name in files if not name.endswith(".md")]
        assert leftovers == [], scope

    for tag, session_id in zip(("alpha", "beta"), sessions, strict=True):
        result = read_records(session_path(workspace.resolve(), session_id))
        assert result.skipped == []
        texts = [visible_text(c) for c, _ in build_conversation(result.records)]
        assert texts == [text for turn in range(TURNS) for text in (f"{tag} turn {turn}", "answer in pieces")]


async def test_one_session_continued_in_both_windows_keeps_every_turn(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    """Found by this campaign: the window that wrote less recently chained past the other's turns, which resume then dropped."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    scripted.default = Reply(chunks=["ok"])
    env = server_env(home, scripted.base_url)
    first, second = await asyncio.gather(ServerProcess.start(env, workspace), ServerProcess.start(env, workspace))
    try:
        session_id = (await first.request("qwen/chat", {"prompt": "A1"}))["sessionId"]
        await second.request("qwen/sessions/resume", {"sessionId": session_id})
        await second.request("qwen/chat", {"prompt": "B2", "sessionId": session_id})
        await first.request("qwen/chat", {"prompt": "A3", "sessionId": session_id})
        resumed = await second.request("qwen/sessions/resume", {"sessionId": session_id})
    finally:
        await asyncio.gather(first.close(), second.close())
    assert [m["text"] for m in resumed["messages"]] == ["A1", "ok", "B2", "ok", "A3", "ok"]
