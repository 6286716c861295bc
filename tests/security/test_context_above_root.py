"""Context files above the project root are resolved and checked like the ones inside.

The upward scan reads ``QWEN.md``/``AGENTS.md`` from the git root's parent
too. That directory is not the project, so the inside-the-project check
never looked at it: ``<parent>/QWEN.md -> /proc/self/environ`` put the
server's environment, the API key included, into the system prompt. The
canary is an environment variable of the real server (docs/security.md,
"Context files and imports").
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.quiet_home import NO_BACKGROUND
from support.scripted_openai import ScriptedOpenAI

from lsp_harness import chat, server_env
from qwen_lsp.context.discovery import discover
from qwen_lsp.context.imports import ImportTrace, LeavesProject

from .permission_client import permission_client

ENVIRON = "environ-canary-4d2a"
KEY = "server-key-81f0"
OUTSIDE = "outside-canary-c7b3"


def layout(tmp_path: Path) -> tuple[Path, Path]:
    parent = tmp_path / "parent"
    ws = parent / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "QWEN.md").write_text("inside-ok\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text(f"{OUTSIDE}\n")
    return parent, ws


def test_a_parent_context_file_linking_out_is_refused_and_a_plain_one_is_read(tmp_path: Path, home: Path) -> None:
    parent, ws = layout(tmp_path)
    (parent / "QWEN.md").symlink_to("/proc/self/environ")
    (parent / "AGENTS.md").symlink_to(tmp_path / "outside" / "secret.md")
    (parent / "docs").mkdir()
    (parent / "docs" / "team.md").write_text("parent-ok\n")
    found = discover(str(ws), ("QWEN.md", "AGENTS.md", "TEAM.md"), home=str(home), global_dir=str(home / ".qwen"))
    (parent / "TEAM.md").symlink_to(parent / "docs" / "team.md")  # a link that stays in its directory's tree
    kept = discover(str(ws), ("TEAM.md",), home=str(home), global_dir=str(home / ".qwen"))
    text = found.text()
    assert "inside-ok" in text and OUTSIDE not in text and "PATH=" not in text and "HOME=" not in text
    refused = {Path(p.path).name: p.message for p in found.problems}
    assert "outside the directory it was found in" in refused["QWEN.md"] and "outside the directory" in refused["AGENTS.md"]
    assert "parent-ok" in kept.text()


def test_no_context_file_resolves_into_proc_not_even_the_users_own(tmp_path: Path, home: Path) -> None:
    _, ws = layout(tmp_path)
    (home / ".qwen" / "QWEN.md").symlink_to("/proc/self/environ")
    found = discover(str(ws), ("QWEN.md",), home=str(home), global_dir=str(home / ".qwen"))
    assert "PATH=" not in found.text() and "inside-ok" in found.text()
    assert any("live system state" in p.message for p in found.problems)


async def test_the_servers_environment_never_reaches_the_prompt(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    parent, ws = layout(tmp_path)
    (parent / "QWEN.md").symlink_to("/proc/self/environ")
    (parent / "AGENTS.md").symlink_to(f"/proc/{os.getpid()}/../self/environ")
    (home / ".qwen" / "settings.json").write_text(json.dumps({**NO_BACKGROUND, "model": {"apiKey": KEY}}))
    env = server_env(home, scripted.base_url, CANARY=ENVIRON)
    env.pop("OPENAI_API_KEY")
    env["QWEN_SERVER_SECRET"] = KEY
    async with permission_client(env, ws, None) as client:
        await chat(client, "hello")
    request = scripted.chat_requests()[0]
    assert request.headers["authorization"] == f"Bearer {KEY}"  # the key is in use, and only in the header
    assert ENVIRON.encode() not in request.raw and KEY.encode() not in request.raw
    assert "inside-ok" in request.body["messages"][0]["content"]



def test_an_import_into_proc_is_refused_even_where_the_root_would_allow_it() -> None:
    """A repository at ``/`` (some container images) would allow every path; ``/proc`` stays out all the same."""
    trace = ImportTrace()
    for target in ("/proc/self/environ", "/sys/kernel/hostname"):
        refused = trace.load(target, "/")
        assert isinstance(refused, LeavesProject) and "/proc or /sys" in str(refused)
