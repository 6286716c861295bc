"""Dream: every gate in order, the PID lock, and a cancelled dream that records nothing."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from support.scripted_openai import Reply, ScriptedOpenAI, Stall, ToolCallSpec

from qwen_lsp.agent.fork import ParentRequest
from qwen_lsp.agent.loop import StreamingModel
from qwen_lsp.agent.tools import read_only_tools
from qwen_lsp.llm.client import ChatClient
from qwen_lsp.features.memory.fork import MemoryForks
from qwen_lsp.memory.dream import LOCK_FILE, Dream, count_sessions, lock_held

from .dir_store import DirStore

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
MEMORY = "---\nname: Deploys\ndescription: deploy on Fridays\ntype: project\n---\n\nWe deploy on Fridays (2026-12-04).\n"


class Clocks:
    def __init__(self) -> None:
        self.now = NOW
        self.tick = 1000.0

    def advance(self, hours: float) -> None:
        self.now += timedelta(hours=hours)
        self.tick += hours * 3600


@pytest.fixture
def store(home: Path) -> DirStore:
    return DirStore(home)


@pytest.fixture
def chats(tmp_path: Path) -> Path:
    path = tmp_path / "chats"
    path.mkdir()
    return path


@pytest.fixture
async def client(scripted: ScriptedOpenAI) -> Any:
    async with ChatClient(scripted.base_url, "k", "scripted-model", max_retries=0) as c:
        yield c


def sessions(chats: Path, count: int, when: datetime = NOW) -> list[str]:
    ids = [str(uuid.uuid4()) for _ in range(count)]
    for sid in ids:
        path = chats / f"{sid}.jsonl"
        path.write_text("{}\n")
        os.utime(path, (when.timestamp(), when.timestamp()))
    return ids


def make(store: DirStore, client: ChatClient, tmp_path: Path, chats: Path, clocks: Clocks, **kwargs: Any) -> Dream:
    async def model() -> StreamingModel:
        return client

    return Dream(store, MemoryForks(store, model, workspace_root=tmp_path), workspace_root=tmp_path, transcripts=chats, clock=lambda: clocks.now, monotonic=lambda: clocks.tick, **kwargs)


PARENT = ParentRequest.capture("MAIN SYSTEM", [t.declaration() for t in read_only_tools()], [])


def write_meta(store: DirStore, **fields: Any) -> None:
    store.state_dir().mkdir(parents=True, exist_ok=True)
    (store.state_dir() / "meta.json").write_text(json.dumps(fields))


async def test_a_dream_consolidates_then_records_itself(scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, tmp_path: Path, chats: Path) -> None:
    clocks = Clocks()
    sessions(chats, 5)
    target = store.root("project") / "project" / "deploys.md"
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": MEMORY})]), Reply(chunks=["Merged two."]))
    result = await make(store, client, tmp_path, chats, clocks).maybe_run("current", PARENT)
    assert result.status == "updated" and result.touched_topics == ["project"] and target.read_text() == MEMORY
    meta = json.loads((store.state_dir() / "meta.json").read_text())
    assert meta["lastDreamSessionId"] == "current" and meta["lastDreamAt"] == "2026-12-03T12:00:00.000Z"
    assert store.rebuilt == ["project"] and not (store.state_dir() / LOCK_FILE).exists()
    task = scripted.chat_requests()[0].body["messages"][-1]["content"]
    for phase in ("Phase 1 — Orient", "Phase 2 — Gather", "Phase 3 — Consolidate", "Phase 4 — Update the index"):
        assert phase in task
    assert f'grep -rn "<narrow term>" {chats}/ --include="*.jsonl" | tail -50' in task


async def test_the_gates_skip_in_order(scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, tmp_path: Path, chats: Path) -> None:
    clocks = Clocks()
    enabled = [False]
    dream = make(store, client, tmp_path, chats, clocks, enabled=lambda: enabled[0])
    assert (await dream.maybe_run("s", PARENT)).skipped_reason == "disabled"
    enabled[0] = True
    write_meta(store, lastDreamSessionId="s", lastDreamAt="2026-12-01T00:00:00.000Z")
    assert (await dream.maybe_run("s", PARENT)).skipped_reason == "same_session"
    write_meta(store, lastDreamSessionId="old", lastDreamAt="2026-12-03T00:00:00.000Z")
    assert (await dream.maybe_run("s", PARENT)).skipped_reason == "min_hours"
    write_meta(store, lastDreamSessionId="old", lastDreamAt="2026-12-02T00:00:00.000Z")
    ids = sessions(chats, 4)
    (chats / "not-a-session.jsonl").write_text("")
    (chats / ("a" * 32 + ".json")).write_text("")
    sessions(chats, 3, when=datetime(2026, 12, 1, tzinfo=UTC))  # before the last dream
    assert (await dream.maybe_run(ids[0], PARENT)).skipped_reason == "min_sessions"  # 4 new, but one is the current
    sessions(chats, 2)
    assert (await dream.maybe_run(ids[0], PARENT)).skipped_reason == "scan_throttled"
    clocks.tick += 601
    (store.state_dir() / LOCK_FILE).write_text(str(os.getpid()))
    assert (await dream.maybe_run(ids[0], PARENT)).skipped_reason == "locked"
    assert scripted.chat_requests() == []


def test_sessions_are_counted_by_name_time_and_owner(chats: Path) -> None:
    ids = sessions(chats, 3)
    older = chats / "ABCDEF0123456789abcdef0123456789.jsonl"
    older.write_text("")  # 32 hex characters: counts
    # Its mtime is set, not left at the wall clock: the test once assumed the real "now" was far
    # from NOW and failed on the day NOW names.
    os.utime(older, ((NOW - timedelta(hours=2)).timestamp(),) * 2)
    (chats / "short-1234.jsonl").write_text("")
    assert count_sessions(chats, None, ids[0]) == 3
    assert count_sessions(chats, NOW - timedelta(hours=1), "x") == 3  # changed before `since`: not counted
    assert count_sessions(chats, NOW - timedelta(hours=3), "x") == 4
    assert count_sessions(chats / "missing", None, "x") == 0


def test_stale_and_dead_locks_are_removed(store: DirStore) -> None:
    lock = store.state_dir() / LOCK_FILE
    lock.parent.mkdir(parents=True)
    lock.write_text(str(os.getpid()))
    assert lock_held(lock, os.stat(lock).st_mtime + 10) and lock.exists()
    assert not lock_held(lock, os.stat(lock).st_mtime + 3601) and not lock.exists()
    for content in ("999999999", "0", "-4", "not a pid", ""):
        lock.write_text(content)
        assert not lock_held(lock, os.stat(lock).st_mtime) and not lock.exists()
    assert not lock_held(lock, 0)


async def test_a_dead_holder_lock_does_not_block_the_dream(scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, tmp_path: Path, chats: Path) -> None:
    sessions(chats, 5)
    store.state_dir().mkdir(parents=True)
    (store.state_dir() / LOCK_FILE).write_text("999999999")
    scripted.enqueue(Reply(chunks=["nothing to merge"]))
    result = await make(store, client, tmp_path, chats, Clocks()).maybe_run("s", PARENT)
    assert result.status == "noop" and not (store.state_dir() / LOCK_FILE).exists()


async def test_a_cancelled_dream_records_nothing(scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, tmp_path: Path, chats: Path) -> None:
    sessions(chats, 5)
    scripted.enqueue(Stall())
    clocks = Clocks()
    dream = make(store, client, tmp_path, chats, clocks)
    running = asyncio.create_task(dream.maybe_run("s", PARENT))
    while not scripted.chat_requests():
        await asyncio.sleep(0.01)
    assert (store.state_dir() / LOCK_FILE).read_text() == str(os.getpid())
    (store.state_dir() / LOCK_FILE).unlink()  # someone removed it: only the in-process flag still knows
    clocks.tick += 601
    assert (await dream.maybe_run("s2", PARENT)).skipped_reason == "running"
    dream.cancel()
    result = await running
    assert result.status == "cancelled"
    assert not (store.state_dir() / "meta.json").exists() and store.rebuilt == []


async def test_a_failed_lock_release_heals_on_the_next_schedule(
    scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, tmp_path: Path, chats: Path
) -> None:
    clocks = Clocks()
    sessions(chats, 5)
    lock = store.state_dir() / LOCK_FILE

    def jam_the_lock(_body: dict[str, Any]) -> Reply:
        lock.unlink()
        lock.mkdir()  # unlink() of a directory fails: the release fails
        (lock / "x").write_text("")
        return Reply(chunks=["done"])

    scripted.enqueue(jam_the_lock)
    dream = make(store, client, tmp_path, chats, clocks)
    assert (await dream.maybe_run("s1", PARENT)).status == "noop" and lock.is_dir()
    clocks.advance(25)
    sessions(chats, 5, when=clocks.now + timedelta(minutes=1))
    scripted.enqueue(Reply(chunks=["again"]))
    assert (await dream.maybe_run("s2", PARENT)).status == "noop"
    assert not lock.exists()
