"""Shared path rules: sanitizing, QWEN_HOME, git root and branch."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from qwen_lsp.files.paths import chats_dir, find_git_root, git_branch, global_qwen_dir, home_dir, sanitize_cwd


def test_sanitize_cwd_matches_qwen_code():
    assert sanitize_cwd("/home/a/repo") == "-home-a-repo"
    assert sanitize_cwd("/w/my_repo.v2") == "-w-my-repo-v2"


def test_qwen_home_moves_the_global_dir_and_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    monkeypatch.delenv("QWEN_HOME", raising=False)
    assert global_qwen_dir() == tmp_path / "h" / ".qwen" and home_dir() == tmp_path / "h"
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "alt" / ".qwen"))
    assert global_qwen_dir() == (tmp_path / "alt" / ".qwen").resolve()
    assert home_dir() == (tmp_path / "alt").resolve()
    assert chats_dir("/w/r") == (tmp_path / "alt" / ".qwen" / "projects" / "-w-r" / "chats").resolve()


def test_git_root_and_branch(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / "a" / "b").mkdir(parents=True)
    assert find_git_root(repo / "a") is None and git_branch(repo) is None
    subprocess.run(["git", "init", "-q", "-b", "feature/x", str(repo)], check=True)
    assert find_git_root(repo / "a" / "b") == repo.resolve()
    assert git_branch(repo / "a") == "feature/x"
    (repo / ".git" / "HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")  # detached
    assert git_branch(repo) is None


def test_git_file_pointer_of_a_worktree(tmp_path: Path):
    real = tmp_path / "real.git"
    real.mkdir()
    (real / "HEAD").write_text("ref: refs/heads/wt-branch\n")
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {real}\n")
    assert find_git_root(wt) == wt.resolve() and git_branch(wt) == "wt-branch"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="the stand-in for HEAD is a named pipe")
def test_a_head_that_is_a_pipe_or_huge_gives_no_branch_and_never_blocks(tmp_path: Path):
    """A worktree pointer may lead anywhere a repository's author chose: its HEAD is read bounded, files only."""
    real = tmp_path / "real.git"
    real.mkdir()
    os.mkfifo(real / "HEAD")  # opening it for reading would wait for a writer forever
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {real}\n")
    assert git_branch(wt) is None
    (real / "HEAD").unlink()
    (real / "HEAD").write_text("ref: refs/heads/" + "x" * 10_000 + "\n")
    assert git_branch(wt) is None
