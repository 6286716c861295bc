"""A directory nested 1,100 deep broke grep_search and glob for the whole workspace (os.walk recursed per level)."""

from __future__ import annotations

from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, running_server

from .deep_tree import deep_tree


async def test_grep_and_glob_work_beside_and_inside_a_tree_1100_deep(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "top.txt").write_text("needle at the top\n")
    with deep_tree(ws) as deep:
        (deep / "bottom.txt").write_text("needle at the bottom\n")
        await search(home, ws, scripted)


async def search(home: Path, ws: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(
        Reply(chunks=[], tool_calls=[ToolCallSpec("grep_search", {"pattern": "needle"}, id="g"), ToolCallSpec("glob", {"pattern": "**/*.txt"}, id="l")]),
        Reply(chunks=["found"]),
    )
    async with running_server(home, ws, scripted.base_url) as client:
        assert as_dict(await chat(client, "find the needles"))["text"] == "found"
    answers = {m["tool_call_id"]: m["content"] for m in scripted.chat_requests()[1].body["messages"] if m.get("role") == "tool"}
    for call in ("g", "l"):
        assert "top.txt" in answers[call] and "bottom.txt" in answers[call], answers[call][:500]
