"""What a "yes" covers: configuration always asks, and "Allow always" covers only what was shown.

The attacks of a prompt-injected model: in ``auto-edit`` (edits run without
asking) it edits ``.git/config`` and writes ``.gitattributes`` so that the
next git run executes its filter; after "Allow always" on ``git status`` it
sends ``git status && touch X``; after "Allow always" on an edit of ``a.py``
it creates ``.git/hooks/pre-commit``. The real server runs each, with a
client that answers from a script and never applies an edit, so "nothing
written" is read both from its log and from the disk (docs/security.md,
"Approvals").
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from support.quiet_home import NO_BACKGROUND
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import chat, server_env
from qwen_lsp.agent.approvals import Approval, ApprovalPolicy, PermissionRequest, ToolPermission
from qwen_lsp.files.protected import protected_reason
from qwen_lsp.sessions.registry import ChatSession
from qwen_lsp.features.followups.gate import gate
from qwen_lsp.features.followups.overlay import Overlay

from .permission_client import permission_client

GIT_CONFIG = "[core]\n\tbare = false\n"
PLANTED = '\tbare = false\n[filter "x"]\n\tclean = sh -c "touch /tmp/pwned"\n'


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text(GIT_CONFIG)
    (root / "a.py").write_text("x = 1\n")
    return root


def call(name: str, args: dict, call_id: str) -> Reply:
    return Reply(chunks=["Working."], tool_calls=[ToolCallSpec(name, args, id=call_id)])


def edit(path: Path, old: str, new: str, call_id: str) -> Reply:
    return call("edit", {"file_path": str(path), "old_string": old, "new_string": new}, call_id)


def write(path: Path, content: str, call_id: str) -> Reply:
    return call("write_file", {"file_path": str(path), "content": content}, call_id)


def shell(command: str, call_id: str) -> Reply:
    return call("run_shell_command", {"command": command}, call_id)


def user_settings(home: Path, mode: str, shell_enabled: bool = False) -> None:
    (home / ".qwen" / "settings.json").write_text(json.dumps({**NO_BACKGROUND, "tools": {"approvalMode": mode, "shell": {"enabled": shell_enabled}}}))


# --------------------------------------------------------------------- configuration always asks


async def test_auto_edit_asks_before_planting_git_config_and_gitattributes(ws: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    user_settings(home, "auto-edit")
    (ws / "cfg").symlink_to(ws / ".git" / "config")  # a decoy name: the write would reach .git/config
    scripted.enqueue(
        edit(ws / ".git" / "config", "\tbare = false\n", PLANTED, "e1"),
        write(ws / ".gitattributes", "* filter=x\n", "w1"),
        write(ws / "cfg", PLANTED, "w3"),
        write(ws / "notes.py", "y = 2\n", "w2"),  # an ordinary file: auto-edit writes it unasked
        Reply(chunks=["Done."]),
    )
    async with permission_client(server_env(home, scripted.base_url), ws, None) as client:
        await chat(client, "set up the repo")
        asked, applied = client.log.asked, client.log.applied
    assert [(a["tool"], Path(a["path"]).name) for a in asked] == [("edit", "config"), ("write_file", ".gitattributes"), ("write_file", "config")]
    assert all(".git" in a["protected"] for a in asked) and asked[2]["path"] == str((ws / ".git" / "config").resolve())
    assert len(applied) == 1 and "notes.py" in str(applied[0])  # only the ordinary write reached the editor
    assert (ws / ".git" / "config").read_text() == GIT_CONFIG and not (ws / ".gitattributes").exists()


async def test_allow_always_on_configuration_is_only_allow(ws: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    user_settings(home, "auto-edit")
    settings = ws / ".qwen" / "settings.json"
    scripted.enqueue(
        write(settings, '{"model": {"name": "a"}}', "w1"),
        write(settings, '{"tools": {"approvalMode": "yolo"}}', "w2"),
        Reply(chunks=["Done."]),
    )
    async with permission_client(server_env(home, scripted.base_url), ws, None, ["allowAlways"]) as client:
        await chat(client, "configure")
        asked, applied = client.log.asked, client.log.applied
    assert [a["toolCallId"] for a in asked] == ["w1", "w2"]  # asked again: the "always" was not remembered
    assert len(applied) == 1


def test_cli_auto_edit_does_not_plant_git_config_without_a_terminal(ws: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    """The CLI with nobody to ask: asking means no, so auto-edit cannot write configuration."""
    scripted.enqueue(
        edit(ws / ".git" / "config", "\tbare = false\n", PLANTED, "e1"),
        write(ws / ".vscode" / "tasks.json", '{"tasks": []}', "w1"),
        write(ws / "notes.py", "y = 2\n", "w2"),
        Reply(chunks=["Done."]),
    )
    out = subprocess.run(
        [sys.executable, "-m", "qwen_lsp", "chat", "--approval-mode", "auto-edit", "set up"],
        cwd=ws, env=server_env(home, scripted.base_url), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    assert (ws / ".git" / "config").read_text() == GIT_CONFIG and not (ws / ".vscode").exists()
    assert (ws / "notes.py").read_text() == "y = 2\n"


@pytest.mark.parametrize(
    ("relative", "protected"),
    [
        (".git/config", True), (".git/hooks/pre-commit", True), (".GIT/config", True), ("sub/.git/config", True),
        (".g\u200cit/config", True), (".git. /hooks/x", True), ("GIT~1/config", True), (".gitattributes.", True),
        (".gitattributes", True), ("src/.gitattributes", True), (".gitmodules", True), (".qwen/settings.json", True),
        (".qwen/skills/x/SKILL.md", True), (".vscode/settings.json", True), (".devcontainer/devcontainer.json", True),
        ("app.code-workspace", True), (".envrc", True), (".husky/pre-commit", True), (".pre-commit-config.yaml", True),
        ("a.py", False), ("docs/git.md", False), (".github/x.md", False), ("QWEN.md", False), ("my.gitattributes.txt", False),
    ],
)
def test_which_files_are_configuration(relative: str, protected: bool) -> None:
    assert (protected_reason(relative) is not None) is protected


def test_speculation_stops_at_a_write_to_configuration(tmp_path: Path) -> None:
    """A speculated write lands on accept; in auto-edit one to ``.git/`` must stop the run instead."""
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    overlay = Overlay(tmp_path / "ws", tmp_path / "ov")
    stopped = gate("edit", {"file_path": str(tmp_path / "ws" / ".git" / "config")}, approval_mode="auto-edit", overlay=overlay)
    ordinary = gate("edit", {"file_path": str(tmp_path / "ws" / "a.py")}, approval_mode="auto-edit", overlay=overlay)
    assert stopped.action == "stop" and "configuration" in stopped.reason
    assert ordinary.action == "write"


# --------------------------------------------------------------------- "Allow always" covers what was shown


async def test_allow_always_on_a_command_covers_its_prefix_rule_and_nothing_chained(ws: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    """0.24.4's rule for ``date`` is ``date``: the same command runs unasked; anything chained to it asks again."""
    user_settings(home, "default", shell_enabled=True)
    touched = ws.parent / "X"
    scripted.enqueue(
        shell("date", "s1"),
        shell("date", "s2"),
        shell(f"date && touch {touched}", "s3"),
        shell(f"date ; touch {touched}", "s4"),
        shell(f"date\ntouch {touched}", "s5"),
        shell(f"date $(touch {touched})", "s6"),
        shell(f"date -u > {touched}", "s7"),
        Reply(chunks=["Done."]),
    )
    async with permission_client(server_env(home, scripted.base_url), ws, None, ["allowAlways"]) as client:
        await chat(client, "what time is it")
        asked = client.log.asked
    assert [a["toolCallId"] for a in asked] == ["s1", "s3", "s4", "s5", "s6", "s7"]  # the same command ran unasked
    assert asked[0]["alwaysCovers"] == "Commands matching 'date' in this chat"
    assert "'touch *'" in asked[1]["alwaysCovers"]
    assert not touched.exists()


async def test_allow_always_on_one_file_does_not_cover_another(ws: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    user_settings(home, "default")
    scripted.enqueue(
        edit(ws / "a.py", "x = 1", "x = 2", "e1"),
        edit(ws / "a.py", "x = 1", "x = 3", "e2"),
        edit(ws / ".git" / "hooks" / "pre-commit", "", "#!/bin/sh\ntouch /tmp/pwned\n", "w1"),  # the same tool, creating a file
        edit(ws / "b.py", "", "z = 1\n", "w2"),
        Reply(chunks=["Done."]),
    )
    async with permission_client(server_env(home, scripted.base_url), ws, None, ["allowAlways"]) as client:
        await chat(client, "edit")
        asked = [a["toolCallId"] for a in client.log.asked]
        applied = client.log.applied
    assert asked == ["e1", "w1", "w2"]
    assert len(applied) == 2 and all("a.py" in str(edit) for edit in applied)
    assert not (ws / ".git" / "hooks" / "pre-commit").exists() and not (ws / "b.py").exists()


@pytest.mark.parametrize("mode", ["default", "auto-edit", "yolo"])
async def test_the_policy_asks_for_configuration_in_every_mode_but_yolo(mode: str) -> None:
    asked: list[PermissionRequest] = []

    async def ask(request: PermissionRequest) -> Approval:
        asked.append(request)
        return Approval("allowAlways")

    policy = ApprovalPolicy(lambda: mode)  # type: ignore[arg-type, return-value]
    chat = ChatSession(id="s", recorder=None, context=None)  # type: ignore[arg-type]
    hook = ToolPermission(tool="write_file", title="Write .git/hooks/pre-commit", path="/w/.git/hooks/pre-commit", protected="hooks")
    first = await policy.decide(chat, "t", "c1", ask, hook)
    second = await policy.decide(chat, "t", "c2", ask, hook)
    if mode == "yolo":
        assert asked == [] and first.decision == second.decision == "auto"
    else:
        assert len(asked) == 2 and first.decision == second.decision == "allow"
        assert asked[0].params().protected == "hooks"


def test_cli_allow_always_on_a_command_does_not_cover_a_chained_one(ws: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    """The CLI on a real pseudo-terminal: 'a' on ``date``; the chained command is asked again and refused."""
    user_settings(home, "default", shell_enabled=True)
    touched = ws.parent / "X"
    scripted.enqueue(shell("date", "s1"), shell("date", "s2"), shell(f"date && touch {touched}", "s3"), Reply(chunks=["Done."]))
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "qwen_lsp", "chat", "status"], cwd=ws, env=server_env(home, scripted.base_url),
        stdin=follower, stdout=subprocess.PIPE, stderr=follower,
    )
    os.close(follower)
    prompts: list[bytes] = []
    try:
        for answer in (b"a\n", b"n\n"):
            seen = b""
            while b"Allow?" not in seen:
                chunk = os.read(leader, 4096)
                assert chunk, seen
                seen += chunk
            prompts.append(seen)
            os.write(leader, answer)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    assert proc.returncode == 0
    assert b"$ date" in prompts[0] and b"touch" in prompts[1]  # the second question is the chained command
    assert not touched.exists()
    # The "n" ended the turn (as in Qwen Code 0.24.4): the model was not asked again after it.
    assert len(scripted.chat_requests()) == 3
    tool_results = [m["content"] for m in scripted.chat_requests()[-1].body["messages"] if m["role"] == "tool"]
    assert len(tool_results) == 2


async def test_git_in_a_nested_repository_that_configures_a_program_asks(ws: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    """``git status`` runs a repository's filter drivers: in a nested repository that configures one, it asks."""
    user_settings(home, "default", shell_enabled=True)
    vendor = ws / "vendor"
    subprocess.run(["git", "init", "-q", str(vendor)], check=True)
    with (vendor / ".git" / "config").open("a") as config:
        config.write('[filter "x"]\n\tclean = sh -c "touch /tmp/pwned"\n')
    (vendor / ".gitattributes").write_text("* filter=x\n")
    subprocess.run(["git", "init", "-q", str(ws / "clean")], check=True)
    scripted.enqueue(
        call("run_shell_command", {"command": "git status", "directory": "clean"}, "s1"),
        call("run_shell_command", {"command": "git status", "directory": "vendor"}, "s2"),
        call("run_shell_command", {"command": "cd vendor && git log"}, "s3"),
        Reply(chunks=["Done."]),
    )
    async with permission_client(server_env(home, scripted.base_url), ws, None, ["deny", "deny"]) as client:
        await chat(client, "status")
        asked = client.log.asked
    assert [a["toolCallId"] for a in asked] == ["s2", "s3"]
    assert asked[0]["directory"] == str(vendor.resolve())
