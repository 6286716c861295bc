"""``qwen-lsp compress [--session ID] [--fast]``, run as a user would."""

from __future__ import annotations

import json
from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec
from test_cli import repo, run  # noqa: F401 - the fixture is used by name

from qwen_lsp.files.paths import sanitize_cwd

SUMMARY = "<analysis>draft</analysis><state_snapshot>asked twice</state_snapshot>"


def records(home: Path, cwd: Path) -> list[dict]:
    [path] = (home / ".qwen" / "projects" / sanitize_cwd(cwd.resolve()) / "chats").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_compress_the_latest_session(repo: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    assert run(["compress"], repo, home, scripted.base_url).returncode == 1  # nothing to compress yet
    scripted.enqueue(Reply(chunks=["one"]), Reply(chunks=["two"]))
    first = run(["chat", "first"], repo, home, scripted.base_url)
    sid = first.stderr.strip().split()[-1].rstrip("]")
    assert run(["chat", "--session", sid, "second"], repo, home, scripted.base_url).returncode == 0

    scripted.enqueue(Reply(chunks=[SUMMARY]))
    out = run(["compress"], repo, home, scripted.base_url)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"Compressed session {sid}: ")
    [checkpoint] = [r for r in records(home, repo) if r.get("subtype") == "chat_compression"]
    assert checkpoint["systemPayload"]["compressedHistory"][0]["parts"][0]["text"].startswith("<state_snapshot>asked twice")


def test_a_failed_compression_says_so_and_changes_nothing(repo: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(chunks=["one"]), Reply(chunks=["two"]))
    sid = run(["chat", "first"], repo, home, scripted.base_url).stderr.strip().split()[-1].rstrip("]")
    run(["chat", "--session", sid, "second"], repo, home, scripted.base_url)
    before = records(home, repo)
    scripted.enqueue(Reply(chunks=["<analysis>no summary"]))
    out = run(["compress", "--session", sid], repo, home, scripted.base_url)
    assert out.returncode == 1 and "failed_empty_summary" in out.stderr
    assert records(home, repo) == before


def test_fast_compress_needs_no_model(repo: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    (repo / "big.txt").write_text("line of text\n" * 300)
    scripted.enqueue(
        Reply(tool_calls=[ToolCallSpec("read_file", {"file_path": str(repo / "big.txt")})]),
        Reply(tool_calls=[ToolCallSpec("read_file", {"file_path": str(repo / "big.txt")})]),
        Reply(chunks=["read"]),
    )
    sid = run(["chat", "read it"], repo, home, scripted.base_url).stderr.strip().split()[-1].rstrip("]")
    env = {"QWEN_MC_KEEP_RECENT": "1"}
    out = run(["compress", "--session", sid, "--fast"], repo, home, None, **env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"Compressed session {sid}: ")
