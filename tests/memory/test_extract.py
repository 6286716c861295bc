"""Extraction end to end: a scripted conversation, then a forked run that writes memory through its tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.scripted_openai import HttpError, Reply, ScriptedOpenAI, ToolCallSpec

from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.agent.fork import ParentRequest
from qwen_lsp.agent.loop import StreamingModel, TurnRequest, run_turn
from qwen_lsp.agent.tool import Tool, ToolContext
from qwen_lsp.agent.tools import read_only_tools
from qwen_lsp.agent.tools.edit import EditTool
from qwen_lsp.agent.tools.shell import ReadOnlyShellTool
from qwen_lsp.agent.tools.write_file import WriteFileTool
from qwen_lsp.llm.client import ChatClient
from qwen_lsp.llm.content import Content
from qwen_lsp.features.memory.fork import MemoryForks
from qwen_lsp.memory.extract import Extractor, existing_memories_block, touched_topics
from qwen_lsp.memory.model import MemoryDoc

from .dir_store import DirStore

MEMORY = "---\nname: No database mocks\ndescription: integration tests hit a real database\ntype: feedback\n---\n\nTests here never mock the database.\n"


def ignore(_event: TurnEvent) -> None:
    return None


def keep(_content: Content, **_meta: Any) -> None:
    return None


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "README.md").write_text("project\n")
    return root


@pytest.fixture
def store(home: Path) -> DirStore:
    return DirStore(home)


@pytest.fixture
async def client(scripted: ScriptedOpenAI) -> Any:
    async with ChatClient(scripted.base_url, "k", "scripted-model", max_retries=0) as c:
        yield c


def parent_tools() -> list[Tool]:
    return [*read_only_tools(), ReadOnlyShellTool(), WriteFileTool(), EditTool()]


async def chat(client: ChatClient, ws: Path, history: list[Content], prompt: str) -> ParentRequest:
    history.append({"role": "user", "parts": [{"text": prompt}]})
    req = TurnRequest(system="MAIN SYSTEM", history=history, tools=parent_tools(), tool_context=ToolContext(workspace_root=ws, cwd=ws))
    await run_turn(client, req, emit=ignore, record=keep)
    return ParentRequest.of_turn(req)


def extractor(store: DirStore, client: ChatClient, ws: Path, **kwargs: Any) -> Extractor:
    async def model() -> StreamingModel:
        return client

    return Extractor(store, MemoryForks(store, model, workspace_root=ws), workspace_root=ws, **kwargs)


def cursor(store: DirStore) -> dict[str, Any]:
    return json.loads((store.state_dir() / "extract-cursor.json").read_text())


async def test_a_conversation_then_extraction_writes_a_memory_through_the_fork(
    scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, ws: Path
) -> None:
    target = store.root("project") / "feedback" / "no-db-mocks.md"
    scripted.enqueue(
        Reply(chunks=["Understood."]),
        Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": MEMORY})]),
        Reply(chunks=["Saved one memory."]),
    )
    history: list[Content] = []
    parent = await chat(client, ws, history, "Remember: tests here never mock the database.")
    result = await extractor(store, client, ws).schedule("s1", parent)

    assert result.status == "updated" and result.touched_topics == ["feedback"] and result.touched_project and not result.touched_user
    assert result.system_message == "Managed auto-memory updated: feedback.md"
    assert target.read_text() == MEMORY and store.writes == [target]
    assert "(no-db-mocks.md)" not in (store.root("project") / "MEMORY.md").read_text()  # index links are relative to the root
    assert "[No database mocks](feedback/no-db-mocks.md)" in (store.root("project") / "MEMORY.md").read_text()
    assert store.rebuilt == ["project"]
    saved = cursor(store)
    assert saved["sessionId"] == "s1" and saved["processedOffset"] == len(history) == 2 and saved["updatedAt"].endswith("Z")
    assert (store.state_dir() / "extract-cursor.json").read_text() == json.dumps(saved, indent=2) + "\n"
    meta = json.loads((store.state_dir() / "meta.json").read_text())
    assert meta["lastExtractionSessionId"] == "s1" and meta["lastExtractionTouchedTopics"] == ["feedback"]

    main, fork, _ = scripted.chat_requests()
    assert fork.body["messages"][0] == main.body["messages"][0] and fork.body["tools"] == main.body["tools"]
    assert fork.raw.startswith(main.raw[: main.raw.index(b'],"stream"')] + b",")
    task = fork.body["messages"][-1]["content"]
    assert str(store.root("project")) in task and str(store.root("user")) in task and "pinned/" in task


async def test_a_turn_that_saved_memory_itself_is_not_extracted_but_a_refused_save_is(scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, ws: Path) -> None:
    target = store.root("project") / "user" / "me.md"
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": MEMORY})]),
        Reply(chunks=["saved"]),
        Reply(chunks=[], tool_calls=[ToolCallSpec("save_memory", {"fact": "likes tabs"})]),
        Reply(chunks=["saved"]),
    )
    history: list[Content] = []
    first = await chat(client, ws, history, "remember me")
    second = await chat(client, ws, history, "and tabs")
    ex = extractor(store, client, ws)
    assert (await ex.schedule("s1", first)).skipped_reason == "memory_tool"
    assert len(scripted.chat_requests()) == 4  # no fork request went out
    # save_memory was refused (this chat does not offer it): the main agent saved nothing, so extraction runs.
    scripted.enqueue(Reply(chunks=["nothing new"]))
    assert (await ex.schedule("s1", second)).status == "noop"
    assert len(scripted.chat_requests()) == 5


async def test_no_new_user_message_moves_the_cursor_without_a_fork(scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, ws: Path) -> None:
    scripted.enqueue(Reply(chunks=["hi"]), Reply(chunks=["nothing to save"]))
    history: list[Content] = []
    parent = await chat(client, ws, history, "hello")
    ex = extractor(store, client, ws)
    assert (await ex.schedule("s1", parent)).status == "noop"
    assert cursor(store)["processedOffset"] == 0  # the fork used no tool and touched nothing: the cursor stays
    requests = len(scripted.chat_requests())
    store.state_dir().mkdir(parents=True, exist_ok=True)
    (store.state_dir() / "extract-cursor.json").write_text(json.dumps({"sessionId": "s1", "processedOffset": 2}))
    result = await ex.schedule("s1", parent)
    assert (result.status, result.skipped_reason) == ("skipped", "no_new_messages")
    assert len(scripted.chat_requests()) == requests and cursor(store)["processedOffset"] == 2


@pytest.mark.parametrize(("saved", "expected_runs"), [({"sessionId": "other", "processedOffset": 2}, True), ({"sessionId": "s1", "processedOffset": 99}, True)])
async def test_the_cursor_counts_only_for_its_session_and_resets_when_history_shrank(
    scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, ws: Path, saved: dict[str, Any], expected_runs: bool
) -> None:
    scripted.enqueue(Reply(chunks=["hi"]), Reply(chunks=[], tool_calls=[ToolCallSpec("list_directory", {"path": str(ws)})]), Reply(chunks=["none"]))
    history: list[Content] = []
    parent = await chat(client, ws, history, "hello")
    store.state_dir().mkdir(parents=True, exist_ok=True)
    (store.state_dir() / "extract-cursor.json").write_text(json.dumps(saved))
    result = await extractor(store, client, ws).schedule("s1", parent)
    assert result.status == "noop" and len(scripted.chat_requests()) == 3
    assert cursor(store) | {"updatedAt": ""} == {"sessionId": "s1", "processedOffset": 2, "updatedAt": ""}  # a tool ran: advanced


async def test_a_failed_fork_leaves_the_cursor_for_a_retry(scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, ws: Path) -> None:
    scripted.enqueue(Reply(chunks=["hi"]), HttpError(400, "nope"))
    parent = await chat(client, ws, [], "Remember that we deploy on Fridays")
    result = await extractor(store, client, ws).schedule("s1", parent)
    assert result.status == "failed" and result.error and not (store.state_dir() / "extract-cursor.json").exists()


async def test_a_project_index_failure_fails_the_run_and_keeps_the_cursor(scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, ws: Path) -> None:
    target = store.root("project") / "project" / "deploy.md"
    scripted.enqueue(
        Reply(chunks=["ok"]),
        Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": MEMORY})]),
        Reply(chunks=["done"]),
    )
    store.fail_rebuild.add("project")
    parent = await chat(client, ws, [], "We deploy on Fridays.")
    result = await extractor(store, client, ws).schedule("s1", parent)
    assert result.status == "failed" and "index" in (result.error or "")
    assert not (store.state_dir() / "extract-cursor.json").exists()


async def test_one_run_per_project_and_a_newer_request_replaces_the_queued_one(
    scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, ws: Path
) -> None:
    scripted.enqueue(Reply(chunks=["a"]), Reply(chunks=["b"]), Reply(chunks=["c"]))
    history: list[Content] = []
    first = await chat(client, ws, history, "one")
    second = await chat(client, ws, history, "two")
    third = await chat(client, ws, history, "three")
    scripted.enqueue(Reply(chunks=["slow"], first_delay=0.3), Reply(chunks=["third done"]))
    ex = extractor(store, client, ws)
    running = ex.schedule("s1", first)
    replaced = ex.schedule("s1", second)
    latest = ex.schedule("s1", third)
    assert (await replaced).skipped_reason == "superseded"
    assert (await running).status == "noop" and (await latest).status == "noop"
    await ex.drain()
    forks = scripted.chat_requests()[3:]
    assert len(forks) == 2
    assert forks[1].body["messages"][-3]["content"] == "three"  # the queued run is the newest turn's


async def test_cancel_resolves_the_running_extraction_as_cancelled(scripted: ScriptedOpenAI, client: ChatClient, store: DirStore, ws: Path) -> None:
    scripted.enqueue(Reply(chunks=["a"]), Reply(chunks=["slow"], first_delay=30))
    parent = await chat(client, ws, [], "remember that I like tabs")
    ex = extractor(store, client, ws)
    running = ex.schedule("s1", parent)
    while len(scripted.chat_requests()) < 2:
        await asyncio.sleep(0.01)
    ex.cancel()
    assert (await running).status == "cancelled"
    assert not (store.state_dir() / "extract-cursor.json").exists()


def test_touched_topics_follow_the_path_rule(tmp_path: Path) -> None:
    project, user = Path("/h/.qwen/projects/-ws/memory"), Path("/h/.qwen/memories")
    paths = [
        "/h/.qwen/projects/-ws/memory/feedback/a.md",
        "\\h\\.qwen\\memories\\user\\me.md".replace("\\", "/").replace("/h", "\\h", 1),
        "/h/.qwen/projects/-ws/memory-other/project/x.md",
        "/h/.qwen/projects/-ws/memory/MEMORY.md",
        "/h/.qwen/projects/-ws/memory/notes/x.md",
        "/h/.qwen/projects/-ws/memory/feedback/b.md",
    ]
    topics, in_project, in_user = touched_topics(paths, project, user)
    assert topics == ["feedback", "user"] and in_project and in_user
    assert touched_topics(["/h/.qwen/projects/-ws/memory"], project, user) == ([], False, False)


def test_existing_memories_are_listed_with_their_text_cut_at_280(tmp_path: Path) -> None:
    doc = MemoryDoc("project", "feedback", tmp_path / "f.md", "feedback/f.md", "T", "", "abcdefghij" * 50, 0.0)
    block = existing_memories_block([], [doc])
    current = block.split("current=")[1]
    assert current.endswith("…") and len(current) == 281
    assert "- [T](feedback/f.md) — (no description)\n  scope=project\n  topic=feedback\n  path=" in block
