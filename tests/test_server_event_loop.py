"""Slow work never holds the server's event loop: a `git` that sleeps must not stall other requests.

The `git` on PATH here is a real executable that sleeps, then writes a
marker file and runs the real git. Ordering, not wall-clock time, is what is
asserted: other requests and a cancel are answered while the sleeping git
has not finished (its marker file does not exist yet).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from support.scripted_openai import ScriptedOpenAI

from lsp_harness import as_dict, initialize, server_env, start_client

SLEEP_S = 3


@pytest.fixture
def slow_git(tmp_path: Path) -> tuple[Path, Path]:
    """``(bin dir, marker)``: ``git`` that sleeps SLEEP_S s, then leaves ``marker`` and runs the real one."""
    real = shutil.which("git")
    assert real, "git is needed for this test"
    bindir = tmp_path / "slowbin"
    bindir.mkdir()
    marker = tmp_path / "git-finished"
    script = bindir / "git"
    script.write_text(f'#!/bin/sh\nsleep {SLEEP_S}\ntouch "{marker}"\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    return bindir, marker


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "QWEN.md").write_text("Project rules.\n")
    subprocess.run(["git", "-C", str(ws), "init", "-q"], check=True)
    return ws


async def test_skills_list_and_cancel_answer_while_git_sleeps(
    home: Path, repo: Path, scripted: ScriptedOpenAI, slow_git: tuple[Path, Path]
) -> None:
    bindir, marker = slow_git
    env = server_env(home, scripted.base_url, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
    client, _rec = await start_client(env)
    try:
        await initialize(client, repo)
        marker.unlink(missing_ok=True)
        chat = asyncio.ensure_future(client.protocol.send_request_async("qwen/chat", {"prompt": "hi"}, msg_id=77))
        listed = as_dict(await asyncio.wait_for(client.protocol.send_request_async("qwen/skills/list", {}), 30))
        assert "skills" in listed
        assert not marker.exists(), "qwen/skills/list waited for the chat's git snapshot"
        assert not chat.done()

        client.cancel_request(types.CancelParams(id=77))
        with pytest.raises(JsonRpcRequestCancelled):  # the server's -32800
            await asyncio.wait_for(chat, 30)
        assert not marker.exists(), "the cancel waited for git"
        again = as_dict(await asyncio.wait_for(client.protocol.send_request_async("qwen/sessions/list", {}), 30))
        assert "sessions" in again
        assert not marker.exists(), "the next request waited for git"
    finally:
        await client.shutdown_session()
        await client.stop()
