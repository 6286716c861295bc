"""The CLI wrote through a directory swapped for a symlink while its approval prompt waited.

The path is resolved and checked before asking; the write now opens every
directory on it with ``O_NOFOLLOW`` (``qwen_lsp/files/nofollow_write.py``), so a
link put there in the meantime fails the write and nothing lands outside.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from qwen_lsp.agent.approvals import Approval, PermissionRequest
from qwen_lsp.workspace import Workspace
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.files.nofollow_write import PathChanged, write_text_nofollow


def test_writes_replace_keep_the_mode_and_refuse_a_link_on_the_way(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "f.txt"
    write_text_nofollow(target, "one\n")
    assert target.read_text() == "one\n"
    target.chmod(0o640)
    write_text_nofollow(target, "two\n")
    assert target.read_text() == "two\n" and stat.S_IMODE(target.stat().st_mode) == 0o640
    (tmp_path / "outside").mkdir()
    (tmp_path / "a" / "b").rename(tmp_path / "a" / "moved")
    (tmp_path / "a" / "b").symlink_to(tmp_path / "outside")
    with pytest.raises(PathChanged):
        write_text_nofollow(target, "three\n")
    assert list((tmp_path / "outside").iterdir()) == [] and sorted(p.name for p in (tmp_path / "a" / "moved").iterdir()) == ["f.txt"]


async def test_a_directory_swapped_for_a_link_during_the_prompt_is_not_written_through(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()

    async def ask(request: PermissionRequest) -> Approval:
        (ws / "src").rename(ws / "src-real")  # what another process does while the user reads the prompt
        (ws / "src").symlink_to(outside)
        return Approval("allow")

    scripted.enqueue(
        Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": str(ws / "src" / "new.py"), "content": "x = 1\n"}, id="w")]),
        Reply(chunks=["done"]),
    )
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    engine = Workspace(ws, counter=TokenCounter(), env=env, client_settings={"tools": {"approvalMode": "default"}}, ask=ask, interaction_mode="headless")
    try:
        events: list[Any] = []
        result = await engine.chat("add src/new.py", emit=events.append)
    finally:
        await engine.drain()
    assert result.text == "done"
    assert list(outside.iterdir()) == [] and list((ws / "src-real").iterdir()) == []
    answer = next(m["content"] for m in scripted.chat_requests()[1].body["messages"] if m.get("role") == "tool")
    assert answer.startswith("Could not write") and "no longer a directory" in answer
