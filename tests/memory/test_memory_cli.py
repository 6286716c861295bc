"""``qwen-lsp memory …`` run as a user would: a subprocess in a scratch HOME and repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.scripted_openai import Reply, ScriptedOpenAI

from test_cli import run


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    return r


def test_remember_list_recall_and_forget_without_a_model(repo: Path, home: Path):
    saved = run(["memory", "remember", "Migrations", "are", "generated,", "never", "hand-written."], repo, home, None)
    assert saved.returncode == 0, saved.stderr
    path = Path(saved.stdout.strip().rsplit(": ", 1)[1])
    assert path.is_file() and "Migrations are generated, never hand-written." in path.read_text()

    listed = json.loads(run(["memory", "list", "--json"], repo, home, None).stdout)
    assert [(m["path"], m["scope"], m["type"]) for m in listed["memories"]] == [(str(path), "project", "feedback")]

    recall = run(["memory", "recall", "how are migrations written", "--json", "--no-model"], repo, home, None)
    report = json.loads(recall.stdout)
    assert report["strategy"] == "heuristic" and [m["path"] for m in report["memories"]] == [str(path)]
    assert "## Relevant memory" in report["text"]
    plain = run(["memory", "recall", "how are migrations written", "--no-model"], repo, home, None).stdout
    assert str(path) in plain  # each memory's file path is printed

    refused = run(["memory", "forget", "migrations"], repo, home, None)  # no TTY and no --yes: nothing removed
    assert refused.returncode == 1 and path.exists() and "--yes" in refused.stderr
    forgot = run(["memory", "forget", "migrations", "--yes"], repo, home, None)
    assert forgot.returncode == 0 and not path.exists(), forgot.stderr


def test_recall_with_a_model_uses_its_selection(repo: Path, home: Path, scripted: ScriptedOpenAI):
    a = Path(run(["memory", "remember", "Release branches are named release/YYYY-MM."], repo, home, None).stdout.strip().rsplit(": ", 1)[1])
    run(["memory", "remember", "Use ruff for linting."], repo, home, None)
    scripted.enqueue(Reply(chunks=[json.dumps({"selected_memories": [str(a)]})]))
    report = json.loads(run(["memory", "recall", "branch names", "--json"], repo, home, scripted.base_url).stdout)
    assert report["strategy"] == "model" and [m["path"] for m in report["memories"]] == [str(a)]


def test_a_team_secret_is_refused_with_the_rule(repo: Path, home: Path):
    token = "ghp_" + "R4nd0mT0k3n" * 3 + "abc"
    done = run(["memory", "remember", f"ci token {token}", "--scope", "team"], repo, home, None)
    assert done.returncode == 1 and "GitHub PAT" in done.stderr and token not in done.stderr + done.stdout
    assert not (repo / ".qwen" / "team-memory").exists() or not list((repo / ".qwen" / "team-memory").rglob("*.md"))
