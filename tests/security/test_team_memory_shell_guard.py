"""A secret an approved shell command writes into team memory is undone, with Qwen Code's refusal.

Qwen Code 0.24.4's ``run_shell_command`` does not check team memory (run
against the scripted model in yolo, ``printf … > .qwen/team-memory/…`` left
the token in place); its write tools refuse the same content with
"Content contains potential secrets (GitHub PAT) and cannot be written to
team memory…". Here the shell gets that refusal too: the real server over
LSP, the user approving the command, the scripted model asking for it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
from support.quiet_home import write_quiet_settings
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, server_env
from security.permission_client import permission_client
from qwen_lsp.agent.approvals import Approval, ToolPermission
from qwen_lsp.agent.tool import ToolContext
from qwen_lsp.agent.tools.run_shell import ShellTool
from qwen_lsp.features.edits.shell_guard import team_memory_guard
from qwen_lsp.memory.shell_guard import MAX_SNAPSHOT_BYTES, TeamSnapshot, snapshot, team_roots

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
REFUSAL = (
    "Content contains potential secrets (GitHub PAT) and cannot be written to team memory. Team memory is shared "
    "with all repository collaborators. Remove the sensitive content and try again."
)
MEMORY = "---\nname: Deploy\ndescription: deploy runbook\ntype: reference\n---\nRun make deploy.\n"


def repo_with_team(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    team = ws / ".qwen" / "team-memory"
    (team / "reference").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (team / "reference" / "deploy.md").write_text(MEMORY)
    return ws, team


def files_under(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): (os.readlink(p) if p.is_symlink() else p.read_text()) for p in sorted(root.rglob("*")) if not p.is_dir() or p.is_symlink()}


def tool_result(scripted: ScriptedOpenAI, call_id: str) -> str:
    for m in scripted.chat_requests()[-1].body["messages"]:
        if m.get("role") == "tool" and m["tool_call_id"] == call_id:
            return str(m["content"])
    raise AssertionError(f"no result for {call_id}")


async def test_an_approved_command_writing_a_secret_into_team_memory_is_undone(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    ws, team = repo_with_team(tmp_path)
    write_quiet_settings(home, {"tools": {"approvalMode": "default", "shell": {"enabled": True}}})
    before = files_under(team)
    commands = [
        # a new file in a new folder, spelled oddly; an append to a committed memory; a link whose target text is the token
        f"mkdir -p ./.qwen//team-memory/secrets && printf 'token {TOKEN}\\n' > ./.qwen//team-memory/secrets/gh.md",
        f"cd .qwen && cd team-* && echo 'also {TOKEN}' >> reference/deploy.md",
        f"ln -s 'x{TOKEN}' .qwen/team-memory/link.md && echo 'a clean note' > .qwen/team-memory/reference/clean.md",
    ]
    calls = [ToolCallSpec("run_shell_command", {"command": c, "description": "save"}, id=f"s{i}") for i, c in enumerate(commands)]
    scripted.enqueue(Reply(chunks=[], tool_calls=calls), Reply(chunks=["done"]))
    async with permission_client(server_env(home, scripted.base_url), ws, None, ["allow", "allow", "allow"]) as client:
        assert as_dict(await chat(client, "save the deploy token for the team"))["text"] == "done"
        assert [q["command"] for q in client.log.asked] == commands  # each command was asked for and approved
    for i in range(3):
        result = tool_result(scripted, f"s{i}")
        assert result.startswith(REFUSAL + "\n"), result
        assert TOKEN not in result  # the refusal never quotes the secret
    assert files_under(team) == {**before, "reference/clean.md": "a clean note\n"}  # only the clean write stays
    assert not (team / "secrets").exists()  # the folder the command made for the secret went with it


async def test_a_command_that_leaves_team_memory_clean_keeps_its_result(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    ws, team = repo_with_team(tmp_path)
    (team / "reference" / "old.md").write_text(f"committed earlier: {TOKEN}\n")  # not this command's: left alone
    write_quiet_settings(home, {"tools": {"approvalMode": "yolo", "shell": {"enabled": True}}})
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("run_shell_command", {"command": "echo more >> .qwen/team-memory/reference/deploy.md && echo hi"}, id="s0")]), Reply(chunks=["done"]))
    async with permission_client(server_env(home, scripted.base_url), ws, None) as client:
        assert as_dict(await chat(client, "note it"))["text"] == "done"
    result = tool_result(scripted, "s0")
    assert "\nOutput: hi\n" in result and "\nExit Code: 0\n" in result
    assert (team / "reference" / "deploy.md").read_text() == MEMORY + "more\n"
    assert TOKEN in (team / "reference" / "old.md").read_text()


def test_a_write_through_a_linked_folder_and_a_file_swapped_for_a_link_are_put_back(tmp_path: Path) -> None:
    ws, team = repo_with_team(tmp_path)
    (ws / "notes").symlink_to(team / "reference")  # a link elsewhere in the repository leads into team memory
    outside = tmp_path / "outside.md"
    outside.write_text(f"mine {TOKEN}\n")
    recorded: TeamSnapshot = snapshot(team_roots(ws, ws), ws)
    (ws / "notes" / "via-link.md").write_text(f"{TOKEN}\n")
    (team / "reference" / "deploy.md").unlink()
    (team / "reference" / "deploy.md").symlink_to(outside)  # git would commit the link, not the secret: left as the command made it
    undone = recorded.undo_secret_writes()
    assert undone is not None and undone.labels == ["GitHub PAT"] and undone.paths == [team / "reference" / "via-link.md"]
    assert not (team / "reference" / "via-link.md").exists() and outside.read_text() == f"mine {TOKEN}\n"


async def test_a_team_memory_too_large_to_record_refuses_the_command_unrun(tmp_path: Path) -> None:
    ws, team = repo_with_team(tmp_path)
    (team / "big.md").write_bytes(b"x" * (MAX_SNAPSHOT_BYTES + 1))

    async def approve(_call: str, _request: ToolPermission) -> Approval:
        return Approval("allow")

    tool = ShellTool(guard=team_memory_guard(ws))
    result = await tool.run({"command": "touch ran.txt"}, ToolContext(workspace_root=ws, cwd=ws, approve=approve))
    assert result.is_error and result.output.startswith("The command was not run: team memory")
    assert not (ws / "ran.txt").exists()
    clean = await tool.run({"command": "rm .qwen/team-memory/big.md && touch ran.txt"}, ToolContext(workspace_root=ws, cwd=ws, approve=approve))
    assert clean.is_error and (team / "big.md").exists() and not (ws / "ran.txt").exists()  # refused again, unrun
    (team / "big.md").unlink()
    ok = await tool.run({"command": "touch ran.txt"}, ToolContext(workspace_root=ws, cwd=ws, approve=approve))
    assert not ok.is_error and (ws / "ran.txt").exists()


async def test_a_cancelled_command_still_has_its_secret_undone(tmp_path: Path) -> None:
    ws, team = repo_with_team(tmp_path)
    written = team / "reference" / "late.md"

    async def approve(_call: str, _request: ToolPermission) -> Approval:
        return Approval("allow")

    tool = ShellTool(guard=team_memory_guard(ws))
    command = f"echo {TOKEN} > .qwen/team-memory/reference/late.md; sleep 300"
    task = asyncio.ensure_future(tool.run({"command": command}, ToolContext(workspace_root=ws, cwd=ws, approve=approve)))
    for _ in range(500):  # polls for the write, bounded; the command then sleeps until cancelled
        if written.exists() and written.read_text():
            break
        await asyncio.sleep(0.02)
    assert written.exists()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not written.exists() and files_under(team) == {"reference/deploy.md": MEMORY}
