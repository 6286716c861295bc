"""A speculation's forked run against the scripted model: overlay-first tools, limits, stops."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from qwen_lsp.agent.fork import ParentRequest
from qwen_lsp.features.followups.speculation import MAX_SPECULATION_TURNS, run_speculation
from qwen_lsp.agent.tools import read_only_tools
from qwen_lsp.agent.applier import DiskApplier
from qwen_lsp.features.edits.offer import write_tools
from qwen_lsp.features.followups.overlay import Overlay
from qwen_lsp.llm.client import ChatClient


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("OLD_NAME = 1\n")
    return root


def parent(shell: bool = False) -> ParentRequest:
    tools = [*read_only_tools(), *write_tools("auto-edit", can_ask=True, shell_enabled=shell)]
    history = [{"role": "user", "parts": [{"text": "rename OLD_NAME"}]}, {"role": "model", "parts": [{"text": "Shall I?"}]}]
    return ParentRequest.capture("SYSTEM", [t.declaration() for t in tools], history)


def call(name: str, args: dict[str, Any], call_id: str) -> ToolCallSpec:
    return ToolCallSpec(name, args, id=call_id)


def tool_outputs(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


async def speculate(scripted: ScriptedOpenAI, ws: Path, tmp_path: Path, mode: str = "auto-edit", shell: bool = False):
    overlay = Overlay(ws, tmp_path / "overlay")
    async with ChatClient(scripted.base_url, "k", "scripted-model") as client:
        run = await run_speculation(
            client, parent(shell), "yes, rename it", overlay=overlay, applier=DiskApplier(), approval_mode=lambda: mode, cancel=asyncio.Event()
        )
    return run, overlay


async def test_read_tools_see_what_the_speculation_wrote(scripted: ScriptedOpenAI, ws: Path, tmp_path: Path) -> None:
    app, new = ws / "src" / "app.py", ws / "src" / "names.py"
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[call("write_file", {"file_path": str(new), "content": "NEW_NAME = 2\n"}, "w"), call("edit", {"file_path": str(app), "old_string": "OLD_NAME", "new_string": "NEW_NAME"}, "e")]),
        Reply(
            chunks=[],
            tool_calls=[
                call("read_file", {"file_path": str(new)}, "r1"),
                call("read_file", {"file_path": str(app)}, "r2"),
                call("grep_search", {"pattern": "NEW_NAME"}, "g"),
                call("glob", {"pattern": "**/*.py"}, "gl"),
                call("list_directory", {"path": str(ws / "src")}, "ls"),
            ],
        ),
        Reply(chunks=["Renamed."]),
    )
    run, overlay = await speculate(scripted, ws, tmp_path)
    assert run.status == "ready" and run.text == "Renamed." and run.usage.requests == 3
    assert app.read_text() == "OLD_NAME = 1\n" and not new.exists()  # the workspace is untouched
    out = tool_outputs(scripted.chat_requests()[2].body)
    assert out["r1"] == "NEW_NAME = 2" and out["r2"] == "NEW_NAME = 1"
    assert "NEW_NAME" in out["g"] and "names.py" in out["g"]
    assert str(new) in out["gl"] and str(overlay.directory) not in out["gl"]
    assert "names.py" in out["ls"] and "app.py" in out["ls"]
    assert [c.path.name for c in overlay.changes()] == ["names.py", "app.py"]
    assert [c["role"] for c, _meta in run.records] == ["model", "user", "model", "user", "model"]


async def test_a_stop_answers_the_rest_of_the_response_and_ends_the_run(scripted: ScriptedOpenAI, ws: Path, tmp_path: Path) -> None:
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[call("read_file", {"file_path": str(ws / "src" / "app.py")}, "r"), call("run_shell_command", {"command": "pytest"}, "s"), call("read_file", {"file_path": str(ws / "src" / "app.py")}, "r2")]),
    )
    run, _overlay = await speculate(scripted, ws, tmp_path, shell=True)
    assert (run.status, run.reason) == ("stopped", "run_shell_command: pytest")
    assert len(scripted.chat_requests()) == 1
    model, tools = run.produced
    assert [p["functionResponse"]["id"] for p in tools["parts"]] == ["r", "s", "r2"]  # every call answered
    assert "OLD_NAME" in json.dumps(tools["parts"][0]) and "Not run" in json.dumps(tools["parts"][2])
    assert (run.complete, run.complete_events) == (0, 0)  # stopped in its first round: nothing to continue from


async def test_the_checkpoint_marks_the_complete_rounds_of_a_stopped_run(scripted: ScriptedOpenAI, ws: Path, tmp_path: Path) -> None:
    app = ws / "src" / "app.py"
    scripted.enqueue(
        Reply(chunks=["Renaming."], tool_calls=[call("edit", {"file_path": str(app), "old_string": "OLD_NAME", "new_string": "NEW_NAME"}, "e")]),
        Reply(chunks=["Checking."], tool_calls=[call("write_file", {"file_path": str(ws / "log.txt"), "content": "x"}, "w"), call("run_shell_command", {"command": "pytest"}, "s")]),
    )
    run, overlay = await speculate(scripted, ws, tmp_path, shell=True)
    assert run.status == "stopped" and len(run.records) == 4
    assert run.complete == 2 and [c["role"] for c, _ in run.records[:2]] == ["model", "user"]
    kept = run.events[: run.complete_events]
    assert [e.kind for e in kept] == ["text", "toolCall", "toolResult"] and kept[0].text == "Renaming."
    assert all(e.text != "Checking." for e in kept) and len(run.events) > len(kept)
    overlay.rewind()  # what accept does before landing the complete rounds
    assert [c.path for c in overlay.changes()] == [app.resolve()]


async def test_edits_in_default_mode_stop_instead_of_asking(scripted: ScriptedOpenAI, ws: Path, tmp_path: Path) -> None:
    scripted.enqueue(Reply(chunks=[], tool_calls=[call("write_file", {"file_path": str(ws / "x.py"), "content": "x"}, "w")]))
    run, overlay = await speculate(scripted, ws, tmp_path, mode="default")
    assert run.status == "stopped" and "asks before every edit" in run.reason
    assert overlay.touched() == [] and not (ws / "x.py").exists()


async def test_the_run_ends_after_the_seed_turn_limit(scripted: ScriptedOpenAI, ws: Path, tmp_path: Path) -> None:
    scripted.default = Reply(chunks=[], tool_calls=[call("list_directory", {"path": str(ws)}, "l")])
    run, _overlay = await speculate(scripted, ws, tmp_path)
    assert len(scripted.chat_requests()) == MAX_SPECULATION_TURNS == 20
    assert run.usage.requests == 20 and len(run.produced) == 40
