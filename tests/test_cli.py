"""The command line, run as a user would: a subprocess in a scratch HOME and repository."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support.scripted_openai import HttpError, Reply, ScriptedOpenAI

from qwen_lsp.paths import sanitize_cwd


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    (r / "pkg" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    (r / "QWEN.md").write_text("Repository rules.\n")
    return r


def run(args: list[str], cwd: Path, home: Path, base_url: str | None, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DASHSCOPE_", "QWEN_"))}
    e["HOME"] = str(home)
    if base_url:
        e.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="x", OPENAI_MODEL="m")
    e.update(env)
    return subprocess.run(
        [sys.executable, "-m", "qwen_lsp", *args], cwd=cwd, env=e, input=stdin, capture_output=True, text=True, timeout=60
    )


def test_chat_prints_the_reply_and_records_the_session(repo: Path, home: Path, scripted: ScriptedOpenAI):
    scripted.enqueue(Reply(chunks=["Hello", " there"]))
    cwd = repo / "pkg" / "deep"
    out = run(["chat", "hi"], cwd, home, scripted.base_url)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Hello there\n"
    chats = home / ".qwen" / "projects" / sanitize_cwd(cwd.resolve()) / "chats"
    files = list(chats.glob("*.jsonl"))
    assert len(files) == 1
    records = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert [r["type"] for r in records] == ["user", "assistant"]
    assert records[0]["message"]["parts"][-1] == {"text": "hi"}
    assert records[1]["message"]["parts"] == [{"text": "Hello there"}]
    assert records[1]["parentUuid"] == records[0]["uuid"] and records[0]["parentUuid"] is None
    assert all(r["cwd"] == str(cwd.resolve()) and r["sessionId"] == files[0].stem for r in records)
    body = scripted.chat_requests()[-1].body
    assert "Repository rules." in body["messages"][0]["content"] and body["model"] == "m"


def test_chat_reads_the_prompt_from_stdin_and_continues_a_session(repo: Path, home: Path, scripted: ScriptedOpenAI):
    first = run(["chat"], repo, home, scripted.base_url, stdin="from stdin\n")
    assert first.returncode == 0, first.stderr
    session = first.stderr.strip().splitlines()[-1].removeprefix("[session ").removesuffix("]")
    second = run(["chat", "--session", session, "next"], repo, home, scripted.base_url)
    assert second.returncode == 0, second.stderr
    msgs = scripted.chat_requests()[-1].body["messages"]
    assert [m["role"] for m in msgs[1:]] == ["user", "assistant", "user"]
    shown = run(["sessions", "show", session], repo, home, None)
    assert "from stdin" in shown.stdout and "next" in shown.stdout
    listed = run(["sessions", "list"], repo, home, None)
    assert session in listed.stdout


def test_chat_failures_are_one_line_and_non_zero(repo: Path, home: Path, scripted: ScriptedOpenAI):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    out = run(["chat", "hi"], repo, home, dead)
    assert out.returncode != 0
    assert out.stderr.strip().count("\n") == 0 and "Nothing is listening" in out.stderr and "Traceback" not in out.stderr
    scripted.enqueue(HttpError(401, "bad key"))
    out = run(["chat", "hi"], repo, home, scripted.base_url)
    assert out.returncode != 0 and "rejected" in out.stderr
    out = run(["chat", "hi"], repo, home, None)
    assert out.returncode != 0 and "OPENAI_BASE_URL" in out.stderr


def test_context_json_totals_and_lists_files(repo: Path, home: Path):
    out = run(["context", "--json"], repo / "pkg" / "deep", home, None)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["totalTokens"] == sum(s["tokens"] for s in report["sections"])
    assert any(s.get("source") == "../../QWEN.md" for s in report["sections"])
    text = run(["context"], repo, home, None)
    assert text.returncode == 0 and "total" in text.stdout


def test_skills_list_shows_bundled_and_errors(repo: Path, home: Path):
    bad = repo / ".qwen" / "skills" / "bad"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("no frontmatter here\n")
    out = run(["skills", "list"], repo, home, None)
    assert out.returncode == 0, out.stderr
    assert "code-review" in out.stdout and "missing YAML frontmatter" in out.stdout
    data = json.loads(run(["skills", "list", "--json"], repo, home, None).stdout)
    assert any(s["name"] == "write-tests" and s["level"] == "bundled" for s in data["skills"])


def test_doctor_reports_sources_and_reachability(repo: Path, home: Path, scripted: ScriptedOpenAI):
    out = run(["doctor"], repo, home, scripted.base_url)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "model.name = 'm'  (environment)" in out.stdout
    assert "reachable" in out.stdout and "tokenizer:" in out.stdout
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    out = run(["doctor"], repo, home, dead)
    assert out.returncode == 1 and "UNREACHABLE" in out.stdout
