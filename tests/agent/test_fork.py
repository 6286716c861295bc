"""The fork primitive against the scripted OpenAI server: wire bytes, budgets, cancel, permissions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.scripted_openai import HttpError, Reply, ScriptedOpenAI, Stall, ToolCallSpec

from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.agent.fork import ParentRequest, fork_history, run_fork
from qwen_lsp.agent.loop import TurnRequest, run_turn
from qwen_lsp.agent.permissions import Decision, Permissions, Verdict, merge
from qwen_lsp.agent.tool import Tool, ToolContext
from qwen_lsp.agent.tools import read_only_tools
from qwen_lsp.agent.tools.edit import EditTool
from qwen_lsp.agent.tools.shell import ReadOnlyShellTool
from qwen_lsp.agent.tools.write_file import WriteFileTool
from qwen_lsp.llm.client import ChatClient
from qwen_lsp.llm.content import Content
from qwen_lsp.features.memory.permissions import memory_rule


def ignore(_event: TurnEvent) -> None:
    return None


def keep(_content: Content, **_meta: Any) -> None:
    return None


def parent_tools() -> list[Tool]:
    """The parent's array as the engine would declare it once memory is wired: read tools plus the memory tools."""
    return [*read_only_tools(), ReadOnlyShellTool(), WriteFileTool(), EditTool()]


async def parent_turn(client: ChatClient, root: Path, tools: list[Tool]) -> ParentRequest:
    req = TurnRequest(
        system="PARENT SYSTEM PROMPT",
        history=[{"role": "user", "parts": [{"text": "tests here never mock the database"}]}],
        tools=tools,
        tool_context=ToolContext(workspace_root=root, cwd=root),
    )
    await run_turn(client, req, emit=ignore, record=keep)
    return ParentRequest.of_turn(req)


def wire(value: Any) -> bytes:
    """How ChatClient serialises a body value."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("x = 1\n")
    return ws


async def test_the_fork_request_repeats_the_parent_system_tools_and_history_bytes(root: Path, scripted: ScriptedOpenAI, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    target = memory / "feedback" / "db.md"
    scripted.enqueue(
        Reply(chunks=["Noted."]),
        Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": "---\nname: db\n---\nno mocks\n"})]),
        Reply(chunks=["saved"]),
    )
    async with ChatClient(scripted.base_url, "k", "scripted-model") as client:
        parent = await parent_turn(client, root, parent_tools())
        result = await run_fork(
            client, parent, "Extract memories.", root=root, tools=[WriteFileTool()], permissions=Permissions((memory_rule([memory]),)), read_roots=[memory]
        )
    assert result.status == "completed" and result.reason == "goal" and result.tools_appended == []
    assert result.files_written == [str(target)] and target.read_text().endswith("no mocks\n")
    first, fork_1, fork_2 = scripted.chat_requests()
    tools_bytes = wire(first.body["tools"])
    assert tools_bytes in first.raw and tools_bytes in fork_1.raw and tools_bytes in fork_2.raw
    assert fork_1.body["tools"] == first.body["tools"]
    # The parent's whole message list is a byte prefix of the fork's.
    parent_messages = first.raw[: first.raw.index(b'],"stream"')]
    assert fork_1.raw.startswith(parent_messages + b",")
    assert fork_1.body["messages"][0] == {"role": "system", "content": "PARENT SYSTEM PROMPT"}
    assert fork_1.body["messages"][-2] == {"role": "assistant", "content": "Noted."}
    assert fork_1.body["messages"][-1]["content"] == "Extract memories."
    assert fork_2.raw.startswith(fork_1.raw[: fork_1.raw.index(b'],"stream"')])


async def test_a_tool_the_parent_did_not_declare_is_appended_and_reported(root: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["hi"]), Reply(chunks=["done"]))
    async with ChatClient(scripted.base_url, "k", "scripted-model") as client:
        parent = await parent_turn(client, root, read_only_tools())
        result = await run_fork(client, parent, "task", root=root, tools=[*read_only_tools(), WriteFileTool()])
    assert result.tools_appended == ["write_file"]
    first, fork = scripted.chat_requests()
    assert fork.body["tools"][: len(first.body["tools"])] == first.body["tools"]
    assert fork.body["tools"][-1]["function"]["name"] == "write_file"


async def test_the_turn_budget_ends_the_run_as_completed(root: Path, scripted: ScriptedOpenAI) -> None:
    looping = Reply(chunks=[], tool_calls=[ToolCallSpec("list_directory", {"path": str(root)})])
    scripted.enqueue(looping, looping, looping, looping)
    parent = ParentRequest.capture("sys", [t.declaration() for t in read_only_tools()], [])
    async with ChatClient(scripted.base_url, "k", "scripted-model") as client:
        result = await run_fork(client, parent, "loop", root=root, tools=read_only_tools(), max_turns=2)
    assert (result.status, result.reason, result.rounds) == ("completed", "max_turns", 2)
    assert len(scripted.chat_requests()) == 2


async def test_the_wall_clock_budget_fails_the_run(root: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Stall(chunks=["thinking"]))
    parent = ParentRequest.capture("sys", [], [])
    async with ChatClient(scripted.base_url, "k", "scripted-model") as client:
        result = await run_fork(client, parent, "slow", root=root, max_seconds=0.3)
    assert (result.status, result.reason) == ("failed", "timeout")
    assert scripted.wait_for_disconnect()


async def test_cancel_resolves_with_cancelled_and_keeps_what_was_written(root: Path, scripted: ScriptedOpenAI, tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    target = memory / "user" / "me.md"
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": "x"})]), Stall())
    cancel = asyncio.Event()
    parent = ParentRequest.capture("sys", [WriteFileTool().declaration()], [])
    async with ChatClient(scripted.base_url, "k", "scripted-model") as client:
        run = asyncio.create_task(
            run_fork(client, parent, "go", root=root, tools=[WriteFileTool()], permissions=Permissions((memory_rule([memory]),)), cancel=cancel)
        )
        while len(scripted.chat_requests()) < 2:
            await asyncio.sleep(0.01)
        cancel.set()
        result = await run  # resolves; does not raise
    assert (result.status, result.reason) == ("cancelled", "cancelled")
    assert result.files_written == [str(target)]
    assert scripted.wait_for_disconnect()


async def test_a_model_error_fails_the_run_without_raising(root: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(HttpError(400, "bad request"))
    async with ChatClient(scripted.base_url, "k", "scripted-model", max_retries=0) as client:
        result = await run_fork(client, ParentRequest.capture("s", [], []), "t", root=root)
    assert result.status == "failed" and result.reason.startswith("error: ")


async def test_refused_calls_are_tool_errors_the_model_reads(root: Path, scripted: ScriptedOpenAI, tmp_path: Path) -> None:
    memory, team = tmp_path / "mem", root / ".qwen" / "team-memory"
    calls = [
        ToolCallSpec("write_file", {"file_path": str(root / "src" / "evil.py"), "content": "x"}, id="outside"),
        ToolCallSpec("write_file", {"file_path": str(team / "project" / "t.md"), "content": "x"}, id="team"),
        ToolCallSpec("edit", {"file_path": str(memory / "pinned" / "p.md"), "old_string": "", "new_string": "x"}, id="pinned"),
        ToolCallSpec("run_shell_command", {"command": "rm -rf /"}, id="shell"),
        ToolCallSpec("run_shell_command", {"command": "ls src"}, id="ls"),
    ]
    scripted.enqueue(Reply(chunks=[], tool_calls=calls), Reply(chunks=["ok"]))
    tools: list[Tool] = [WriteFileTool(), EditTool(), ReadOnlyShellTool()]
    rule = memory_rule([memory], team=team, workspace=root)
    async with ChatClient(scripted.base_url, "k", "scripted-model") as client:
        result = await run_fork(
            client, ParentRequest.capture("s", [t.declaration() for t in tools], []), "t", root=root, tools=tools, permissions=Permissions((rule,))
        )
    assert result.status == "completed" and result.files_written == []
    assert not (root / "src" / "evil.py").exists() and not team.exists() and not (memory / "pinned").exists()
    answers = {m["tool_call_id"]: m["content"] for m in scripted.chat_requests()[1].body["messages"] if m["role"] == "tool"}
    assert "ManagedAutoMemory(edit: only within" in answers["outside"]
    assert "nobody can approve it" in answers["team"] and "team memory" in answers["team"]
    assert "pinned/ is read-only" in answers["pinned"]
    assert "read-only only" in answers["shell"]
    assert "app.py" in answers["ls"]


def test_decisions_merge_deny_over_ask_over_allow_over_default() -> None:
    allow, ask, deny = Verdict(Decision.ALLOW, "a"), Verdict(Decision.ASK, "q"), Verdict(Decision.DENY, "d")
    assert merge([]).decision is Decision.DEFAULT
    assert merge([allow, Verdict(Decision.DEFAULT)]) == allow
    assert merge([allow, ask]) == ask and merge([deny, ask, allow]) == deny
    assert merge([Verdict(Decision.ASK, "first"), Verdict(Decision.ASK, "second")]).rule == "first"
    perms = Permissions((lambda t, a: allow, lambda t, a: deny if t == "write_file" else Verdict(Decision.DEFAULT)))
    assert perms.refusal("read_file", {}) is None
    assert perms.refusal("write_file", {}) == "Permission denied: write_file may not run with these arguments (d)."


def test_the_fork_history_ends_on_a_model_turn_with_open_calls_closed() -> None:
    history: list[Content] = [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "read_file", "args": {}}}]},
    ]
    own = fork_history(history, "Background extraction started.")
    assert own[-2] == {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "Background extraction started."}}}]}
    assert own[-1] == {"role": "model", "parts": [{"text": "Acknowledged."}]}
    assert fork_history([*history[:1], {"role": "model", "parts": [{"text": "a"}]}, {"role": "user", "parts": [{"text": "failed turn"}]}], "n")[-1]["role"] == "model"
    assert history[1]["parts"][0]["functionCall"]["id"] == "c1" and len(history) == 2  # the parent's list is untouched


async def test_cancelling_the_awaiting_task_still_raises_and_hangs_up(root: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Stall())
    async with ChatClient(scripted.base_url, "k", "scripted-model") as client:
        run = asyncio.create_task(run_fork(client, ParentRequest.capture("s", [], []), "t", root=root))
        while not scripted.chat_requests():
            await asyncio.sleep(0.01)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    assert scripted.wait_for_disconnect()
