"""The memory extraction fork's read-only shell may not read through links out of the project.

Before, only arguments containing ``/`` or starting with ``.``/``~`` were
checked: ``cat notes`` with ``notes -> ../outside/id_rsa`` and ``grep -R``
over a directory holding such a link sent the outside file to the model.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.rules_repo import git
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, running_server
from qwen_lsp.shell.analysis import analyse

CANARY = "outside-id-rsa-canary-5e1f"
ATTACKS = [
    "cat notes",
    "grep -R canary .",
    "grep -rR canary docs",
    "find -L . -name key",
    "find . -follow -name key",
    "rg -L canary",
    "ls -L notes",
    "grep -f/tmp/x .",
    "wc --files0-from=names",
    "sort --files0-from=names",
    "head -n 5 docs/key",
    "cat notes | sort",
]


def test_link_following_and_file_list_options_are_refused(tmp_path: Path) -> None:
    for command in ("grep -R x .", "grep -rR x .", "grep --dereference-recursive x", "find -L .", "find . -follow", "find -H .",
                    "rg --follow x", "rg -L x", "ls -L", "ls --dereference", "wc --files0-from=f", "sort --files0-from=f",
                    "sort -T /tmp", "grep -f/etc/passwd x", "grep --file=/etc/passwd x", "cat -- /etc/passwd"):
        assert not analyse(command, tmp_path, [tmp_path]).read_only, command
    assert analyse("grep -rn alpha src | wc -l", tmp_path, [tmp_path]).read_only


@pytest.fixture
def project(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text(f"-----BEGIN KEY----- {CANARY}\n")
    (outside / "names").write_text(str(outside / "id_rsa") + "\0")
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "notes").symlink_to(Path("..") / "outside" / "id_rsa")
    (ws / "docs" / "key").symlink_to(outside / "id_rsa")
    (ws / "names").symlink_to(outside / "names")
    (ws / "readme.md").write_text("inside text\n")
    git(ws, "init", "-q")
    return ws


async def test_the_extraction_forks_shell_never_sends_an_outside_file(project: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    calls = [ToolCallSpec("run_shell_command", {"command": c}, id=f"s{i}") for i, c in enumerate(ATTACKS)]
    calls.append(ToolCallSpec("run_shell_command", {"command": "cat readme.md"}, id="ok"))
    scripted.enqueue(Reply(chunks=["noted"]), Reply(chunks=[], tool_calls=calls))
    scripted.default = Reply(chunks=["nothing to save"])
    options = {"memory": {"autoExtract": True, "autoDream": False}, "tools": {"approvalMode": "yolo"}}  # yolo: this client cannot answer approvals
    async with running_server(home, project, scripted.base_url, options) as client:
        assert as_dict(await chat(client, "we keep keys in docs"))["text"] == "noted"
        for _ in range(500):  # the fork runs in the background; its third request carries the tool answers
            if len(scripted.chat_requests()) >= 3:
                break
            await asyncio.sleep(0.02)
    requests = scripted.chat_requests()
    assert len(requests) >= 3
    assert all(CANARY not in json.dumps(r.body) for r in requests)
    answers = {m["tool_call_id"]: m["content"] for m in requests[2].body["messages"] if m.get("role") == "tool"}
    assert set(answers) == {f"s{i}" for i in range(len(ATTACKS))} | {"ok"}
    for i, command in enumerate(ATTACKS):
        assert "refused" in answers[f"s{i}"] or "Permission denied" in answers[f"s{i}"], (command, answers[f"s{i}"])
    assert "inside text" in answers["ok"]
