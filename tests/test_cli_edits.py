"""``qwen-lsp chat --approval-mode``: edits on disk, asked on the terminal, denied without one."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec
from test_cli import run

from qwen_lsp.agent.approvals import PermissionRequest
from qwen_lsp.features.edits.terminal import parse_answer, terminal_asker


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    (p / "a.py").write_text("x = 1\n")
    return p


def edit_reply(path: Path) -> Reply:
    return Reply(chunks=[], tool_calls=[ToolCallSpec("edit", {"file_path": str(path), "old_string": "x = 1", "new_string": "x = 2"}, id="c1")])


def tool_names(scripted: ScriptedOpenAI) -> list[list[str]]:
    return [[t["function"]["name"] for t in r.body.get("tools", [])] for r in scripted.chat_requests()]


def test_auto_edit_writes_the_file_on_disk(project: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(edit_reply(project / "a.py"), Reply(chunks=["Done."]))
    out = run(["chat", "--approval-mode", "auto-edit", "bump x"], project, home, scripted.base_url)
    assert out.returncode == 0, out.stderr
    assert (project / "a.py").read_text() == "x = 2\n"
    assert "[tool] edit (auto)" in out.stderr
    leftovers = [p.name for p in project.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []  # atomic write: no temporary file left behind


def test_default_mode_without_a_terminal_denies_and_the_model_is_told(project: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(edit_reply(project / "a.py"), Reply(chunks=["OK, not changed."]))
    out = run(["chat", "bump x"], project, home, scripted.base_url, stdin="")
    assert out.returncode == 0, out.stderr
    assert (project / "a.py").read_text() == "x = 1\n"
    assert "denied (no terminal to ask)" in out.stderr
    tool_msgs = [m["content"] for m in scripted.chat_requests()[-1].body["messages"] if m["role"] == "tool"]
    assert "User did not allow tool call" in tool_msgs[0]


def test_plan_offers_no_write_tool(project: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["Plan."]))
    out = run(["chat", "--approval-mode", "plan", "think"], project, home, scripted.base_url)
    assert out.returncode == 0, out.stderr
    (names,) = tool_names(scripted)
    assert "edit" not in names and "write_file" not in names and "read_file" in names


def test_the_terminal_is_asked_when_there_is_one(project: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    """A real pseudo-terminal: the prompt shows the diff, 'y' allows the edit."""
    scripted.enqueue(edit_reply(project / "a.py"), Reply(chunks=["Done."]))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    env.update(HOME=str(home), OPENAI_BASE_URL=scripted.base_url, OPENAI_API_KEY="x", OPENAI_MODEL="m")
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "qwen_lsp", "chat", "bump x"], cwd=project, env=env, stdin=follower, stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    seen = b""
    try:
        while b"Allow?" not in seen:
            chunk = os.read(leader, 4096)
            if not chunk:
                break
            seen += chunk
        assert b"+x = 2" in seen
        os.write(leader, b"y\n")
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    assert proc.returncode == 0
    assert (project / "a.py").read_text() == "x = 2\n"


def test_answers_are_read_strictly() -> None:
    assert [parse_answer(a) for a in ("y", "yes", "a", "always", "", "n", "yes please")] == [
        "allow", "allow", "allowAlways", "allowAlways", "deny", "deny", "deny",
    ]


async def test_a_pipe_is_not_a_terminal() -> None:
    err = io.StringIO()
    ask = terminal_asker(io.StringIO("y\n"), err)
    answer = await ask(PermissionRequest("s", "t", "c", "edit", "Edit a.py", diff="..."))
    assert answer.decision == "deny" and "Edit a.py" in err.getvalue()
