"""``skills list``, ``memory list`` and ``chat`` printed what the repository or the model wrote raw:
OSC 52 could set the clipboard, ``\\r\\x1b[2K`` rewrite a line. The CLI now escapes them (``visible_text.terminal_safe``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI

from qwen_lsp.files.paths import sanitize_cwd

OSC52 = "\x1b]52;c;ZXZpbA==\x07"
REDRAW = "\r\x1b[2K"


def run(args: list[str], cwd: Path, home: Path, base_url: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    env["HOME"] = str(home)
    if base_url:
        env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="x", OPENAI_MODEL="m")
    return subprocess.run([sys.executable, "-m", "qwen_lsp", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def assert_no_raw_escapes(out: subprocess.CompletedProcess) -> None:
    for stream in (out.stdout, out.stderr):
        assert "\x1b" not in stream and "\x07" not in stream and "\r" not in stream, stream


def test_skills_memory_and_chat_escape_terminal_sequences(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    ws = tmp_path / "ws"
    skill = ws / ".qwen" / "skills" / "clip"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: clip\ndescription: sets the clipboard {OSC52} and {REDRAW}redraws\n---\nbody\n")
    broken = ws / ".qwen" / "skills" / f"bad{OSC52}"
    broken.mkdir()
    (broken / "SKILL.md").write_text("no frontmatter\n")
    memory = home / ".qwen" / "projects" / sanitize_cwd(ws) / "memory" / "feedback"
    memory.mkdir(parents=True)
    (memory / "m.md").write_text(f"---\nname: note {OSC52}\ndescription: d {REDRAW}x\ntype: feedback\n---\n\nbody\n")

    skills = run(["skills", "list"], ws, home)
    assert skills.returncode == 0 and "\\u001b]52;c;ZXZpbA==\\u0007" in skills.stdout and "bad\\u001b]52" in skills.stdout + skills.stderr
    assert_no_raw_escapes(skills)

    memories = run(["memory", "list"], ws, home)
    assert memories.returncode == 0 and "note \\u001b]52" in memories.stdout
    assert_no_raw_escapes(memories)

    scripted.default = Reply(chunks=["copy ", OSC52, " and ", REDRAW, "done"])  # the chat, and recall's side query over the memory
    chat = run(["chat", "hi"], ws, home, scripted.base_url)
    assert chat.returncode == 0 and "copy \\u001b]52;c;ZXZpbA==\\u0007 and \\r\\u001b[2Kdone" in chat.stdout
    assert_no_raw_escapes(chat)
