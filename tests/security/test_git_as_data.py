"""The git snapshot reads the repository as data: nothing the repository configures runs.

A folder's ``.git/config`` (an unpacked archive, a copied tree) can name
programs: a filter driver that ``git status`` runs on a file whose stat
differs from the index, ``core.fsmonitor``, hooks, pagers, aliases, and an
``include`` that brings any of those in from elsewhere. Each attack points
them at a script that creates a canary file; the snapshot must still be
taken (so the test cannot pass because git failed) and the canary must not
exist (docs/security.md, "Git as data").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support.quiet_home import NO_BACKGROUND
from support.scripted_openai import ScriptedOpenAI

from lsp_harness import chat, server_env
from qwen_lsp.context.environment import git_snapshot
from qwen_lsp.context.git_as_data import GitCommand, run_git_as_data

from .permission_client import permission_client

CLEAN_GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "a",
    "GIT_AUTHOR_EMAIL": "a@example.com",
    "GIT_COMMITTER_NAME": "a",
    "GIT_COMMITTER_EMAIL": "a@example.com",
}

ATTACKS = {
    "filter": '[filter "x"]\n\tclean = {script}\n\tsmudge = {script}\n\tprocess = {script}\n\trequired = true\n',
    "fsmonitor": "[core]\n\tfsmonitor = {script}\n",
    "hooks": "[core]\n\thooksPath = {hooks}\n",
    "pager": "[core]\n\tpager = {script}\n[pager]\n\tstatus = {script}\n\tlog = {script}\n",
    "alias": "[alias]\n\tstatus = !{script}\n\tlog = !{script}\n",
    "signature": "[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {script}\n[gpg \"ssh\"]\n\tprogram = {script}\n",
    "textconv": '[diff "x"]\n\ttextconv = {script}\n\tcommand = {script}\n[diff]\n\texternal = {script}\n',
    "include": "[include]\n\tpath = {elsewhere}\n",
    "includeIf": '[includeIf "gitdir:/"]\n\tpath = {elsewhere}\n',
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=CLEAN_GIT_ENV, check=True, capture_output=True)


def hostile_repo(tmp_path: Path, *attacks: str) -> tuple[Path, Path]:
    """A committed repository whose config then names the canary script; the tracked file's stat differs from the index."""
    canary = tmp_path / "CANARY"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {canary}\ncat\n")  # a path, not a shell line: ';' starts a comment in git config
    script.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.py").write_text("print(1)\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-qm", "first commit")
    for name in ("post-index-change", "post-checkout", "pre-commit", "reference-transaction", "fsmonitor-watchman"):
        for where in (hooks, repo / ".git" / "hooks"):
            (where / name).write_text(f"#!/bin/sh\ntouch {canary}\n")
            (where / name).chmod(0o755)
    elsewhere = tmp_path / "elsewhere.config"
    elsewhere.write_text(ATTACKS["filter"].format(script=script) + ATTACKS["fsmonitor"].format(script=script))
    with (repo / ".git" / "config").open("a") as config:
        for attack in attacks:
            config.write(ATTACKS[attack].format(script=script, hooks=hooks, elsewhere=elsewhere))
    (repo / ".gitattributes").write_text("* filter=x diff=x\n")
    os.utime(repo / "a.py", (946_684_800, 946_684_800))  # stat differs from the index: git would re-clean it
    return repo, canary


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_the_snapshot_runs_nothing_the_repository_configures(tmp_path: Path, attack: str) -> None:
    repo, canary = hostile_repo(tmp_path, attack)
    snapshot = git_snapshot(str(repo))
    assert snapshot is not None and "git: Current branch: main" in snapshot and "first commit" in snapshot
    assert "?? .gitattributes" in snapshot
    assert not canary.exists()


def test_commands_run_together_each_output_in_order_and_one_failure_fails_the_call(tmp_path: Path) -> None:
    """The snapshot's ``status`` and ``log`` start together; a failing one (here a bad revision) fails the whole call,
    as the snapshot then gives none."""
    repo, canary = hostile_repo(tmp_path, *ATTACKS)
    status, log = run_git_as_data(
        str(repo), [GitCommand(("status", "--short", "--branch"), c_locale=True), GitCommand(("log", "--oneline", "-n", "1"))], timeout=30
    )
    assert status.startswith("## main") and "?? .gitattributes" in status
    assert log.strip().endswith("first commit")
    with pytest.raises(subprocess.CalledProcessError):
        run_git_as_data(str(repo), [GitCommand(("status", "--short")), GitCommand(("log", "no-such-revision"))], timeout=30)
    assert not canary.exists()


def test_plain_git_would_have_run_the_filter(tmp_path: Path) -> None:
    """The control: Qwen Code's own command line on the same repository runs the planted filter."""
    repo, canary = hostile_repo(tmp_path, "filter")
    subprocess.run(["git", "-c", "core.fsmonitor=", "--no-optional-locks", "status", "--short"], cwd=repo, env=CLEAN_GIT_ENV, capture_output=True)
    assert canary.exists()


def test_a_linked_worktree_and_a_subdirectory_get_their_snapshot(tmp_path: Path) -> None:
    repo, canary = hostile_repo(tmp_path, *ATTACKS)
    git(repo, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=", "-c", "filter.x.required=false", "-c", "filter.x.clean=cat",
        "-c", "filter.x.smudge=cat", "-c", "filter.x.process=", "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    (repo / "sub").mkdir()
    side = git_snapshot(str(tmp_path / "side"))
    inner = git_snapshot(str(repo / "sub"))
    assert side is not None and "Current branch: side" in side and "first commit" in side
    assert inner is not None and "Current branch: main" in inner and "?? ../.gitattributes" in inner
    assert not canary.exists()


def test_the_kept_scratch_directory_follows_the_repository(tmp_path: Path) -> None:
    """Our common directory is made once per repository and re-checked at each snapshot: refs packed
    after the first one (``packed-refs`` appears, the loose ref goes), a commit made since, and the
    directory removed under us (a /tmp cleaner) all show in the next snapshot; still nothing runs."""
    repo, canary = hostile_repo(tmp_path, *ATTACKS)
    tame = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=", "-c", "filter.x.required=false", "-c", "filter.x.clean=cat",
            "-c", "filter.x.smudge=cat", "-c", "filter.x.process=")
    first = git_snapshot(str(repo))
    assert first is not None and "first commit" in first
    git(repo, *tame, "branch", "other")
    git(repo, *tame, "pack-refs", "--all")  # refs/heads/* now only in packed-refs
    assert not (repo / ".git" / "refs" / "heads" / "main").exists() and (repo / ".git" / "packed-refs").exists()
    git(repo, *tame, "symbolic-ref", "HEAD", "refs/heads/other")
    packed = git_snapshot(str(repo))
    assert packed is not None and "Current branch: other" in packed and "first commit" in packed
    scratch = next(Path(d) for d in Path(tempfile.gettempdir()).glob("qwen-lsp-git-*") if (d / "refs").resolve() == (repo / ".git" / "refs").resolve())
    shutil.rmtree(scratch)
    git(repo, *tame, "commit", "-q", "--allow-empty", "--no-verify", "-m", "second commit")
    again = git_snapshot(str(repo))
    assert again is not None and "second commit" in again
    assert not canary.exists()


async def test_first_chat_in_plan_mode_untrusted_runs_no_repository_program(tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    """The reported attack, end to end: plan mode, ``folderTrust: false``, every variant at once."""
    repo, canary = hostile_repo(tmp_path, *ATTACKS)
    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps({**NO_BACKGROUND, "folderTrust": False, "tools": {"approvalMode": "plan"}}))
    async with permission_client(server_env(home, scripted.base_url), repo, {"folderTrust": False}) as client:
        await chat(client, "hello")
    system = scripted.chat_requests()[0].body["messages"][0]["content"]
    assert "git: Current branch: main" in system and "first commit" in system
    assert not canary.exists()


def test_cli_chat_runs_no_repository_program(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    repo, canary = hostile_repo(tmp_path, *ATTACKS)
    out = subprocess.run(
        [sys.executable, "-m", "qwen_lsp", "chat", "--approval-mode", "plan", "hello"],
        cwd=repo, env=server_env(home, scripted.base_url), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    assert "first commit" in scripted.chat_requests()[0].body["messages"][0]["content"]
    assert not canary.exists()


def test_a_git_folder_git_would_refuse_gets_no_snapshot_and_starts_no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``.git`` folder without ``HEAD``, ``objects`` or ``refs`` (an empty placeholder) is refused by git before
    it reads anything, so no ``git`` process is started for it; once it is a repository, git runs as before.
    A ``git`` earlier on ``PATH`` logs each start and hands over to the real one."""
    real = shutil.which("git")
    assert real is not None
    starts = tmp_path / "git-starts"
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "git").write_text(f'#!/bin/sh\necho "$@" >> {starts}\nexec {real} "$@"\n')
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    folder = tmp_path / "ws"
    (folder / ".git").mkdir(parents=True)
    assert git_snapshot(str(folder)) is None
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / ".git" / "refs").mkdir()
    assert git_snapshot(str(folder)) is None  # still no objects
    assert not starts.exists()
    shutil.rmtree(folder / ".git")
    git(folder, "init", "-q", "-b", "main")
    (folder / "a.py").write_text("print(1)\n")
    git(folder, "add", "a.py")
    git(folder, "commit", "-qm", "first commit")
    snapshot = git_snapshot(str(folder))
    assert snapshot is not None and "git: Current branch: main" in snapshot and "first commit" in snapshot
    assert len(starts.read_text().splitlines()) == 2  # status and log
