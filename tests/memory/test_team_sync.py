"""Team memory sync against a real bare remote and two clones, checked from outside with plain git.

The cases of Qwen Code 0.24.4's ``syncTeamMemory`` (``features/memory/team_sync.py``): a
collaborator's entry is pulled before the index is built, our change is committed and pushed
alone, the user's other unpushed commits are left unpushed, a diverged branch is left alone, no
upstream means no push, a rejected push is undone. And what the repository's config may name —
hooks, filters, fsmonitor, ``ext::`` remotes, upload-pack programs, a remote inside the checkout —
never runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from qwen_lsp.features.memory.team_sync import describe, sync_enabled, sync_team_memory
from qwen_lsp.memory.store import MemoryStore

ENV_ID = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.rstrip()


@pytest.fixture
def remote(tmp_path: Path, home: Path) -> Path:
    (home / ".gitconfig").write_text("[user]\n\tname = Tester\n\temail = tester@example.com\n[init]\n\tdefaultBranch = main\n")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "--quiet", str(bare), str(seed))
    (seed / "README.md").write_text("# project\n")
    git(seed, "add", "README.md")
    git(seed, "commit", "--quiet", "-m", "start")
    git(seed, "push", "--quiet", "origin", "HEAD:main")
    return bare


def clone(remote: Path, name: str) -> Path:
    path = remote.parent / name
    git(remote.parent, "clone", "--quiet", str(remote), str(path))
    return path


def store(repo: Path, home: Path) -> MemoryStore:
    return MemoryStore(repo, home=home, env={})


def tip(remote: Path) -> str:
    return git(remote, "rev-parse", "main")


def test_a_collaborators_entry_is_pulled_before_the_index_is_built_and_ours_is_pushed_alone(remote: Path, home: Path) -> None:
    a, b = clone(remote, "a"), clone(remote, "b")
    store(b, home).remember(text="Releases are cut on Tuesdays", type="project", scope="team")
    b_result = sync_team_memory(store(b, home))
    assert (b_result.committed, b_result.pushed, b_result.skipped) == (True, True, None), b_result
    assert git(remote, "log", "-1", "--format=%s", "main") == "chore(memory): sync team memory"

    sa = store(a, home)
    sa.remember(text="Never force-push main", type="feedback", scope="team")
    (a / "README.md").write_text("# project, edited\n")  # the user's own change: not ours to commit
    (a / "notes.txt").write_text("staged\n")
    git(a, "add", "notes.txt")
    result = sync_team_memory(sa)
    assert (result.pulled, result.committed, result.pushed, result.skipped) == (True, True, True, None), result
    index = (a / ".qwen" / "team-memory" / "MEMORY.md").read_text()
    assert "Releases are cut on Tuesdays" in index and "Never force-push main" in index
    assert tip(remote) == git(a, "rev-parse", "HEAD")
    changed = git(remote, "show", "--name-only", "--format=", "main").splitlines()
    assert changed and all(p.startswith(".qwen/team-memory/") for p in changed)
    assert set(git(a, "status", "--porcelain").splitlines()) == {"A  notes.txt", " M README.md"}  # still the user's, as they were
    # B, syncing again, gets A's entry into its index
    again = sync_team_memory(store(b, home))
    assert again.pulled and "Never force-push main" in (b / ".qwen" / "team-memory" / "MEMORY.md").read_text()
    assert describe(result) == "Team memory synced: pulled, committed, pushed."


def test_other_unpushed_commits_are_left_unpushed(remote: Path, home: Path) -> None:
    a = clone(remote, "a")
    before = tip(remote)
    (a / "work.txt").write_text("mine\n")
    git(a, "add", "work.txt")
    git(a, "commit", "--quiet", "-m", "my unpushed work")
    store(a, home).remember(text="Use ruff", type="feedback", scope="team")
    result = sync_team_memory(store(a, home))
    assert (result.committed, result.pushed, result.skipped) == (True, False, "local-ahead"), result
    assert tip(remote) == before
    assert git(a, "log", "--format=%s", "-2").splitlines() == ["chore(memory): sync team memory", "my unpushed work"]


def test_a_diverged_branch_is_left_alone(remote: Path, home: Path) -> None:
    a, b = clone(remote, "a"), clone(remote, "b")
    (b / "theirs.txt").write_text("theirs\n")
    git(b, "add", "theirs.txt")
    git(b, "commit", "--quiet", "-m", "theirs")
    git(b, "push", "--quiet")
    (a / "ours.txt").write_text("ours\n")
    git(a, "add", "ours.txt")
    git(a, "commit", "--quiet", "-m", "ours")
    head = git(a, "rev-parse", "HEAD")
    remote_before = tip(remote)
    store(a, home).remember(text="Prefer small PRs", type="feedback", scope="team")
    result = sync_team_memory(store(a, home))
    assert (result.pulled, result.committed, result.pushed, result.skipped) == (False, False, False, "pull-failed"), result
    assert git(a, "rev-parse", "HEAD") == head and tip(remote) == remote_before
    assert "?? .qwen/" in git(a, "status", "--porcelain")  # the entry is still there, uncommitted
    assert "Prefer small PRs" in (a / ".qwen" / "team-memory" / "MEMORY.md").read_text()
    assert describe(result).startswith("Team memory sync: could not fast-forward")


def test_without_an_upstream_it_commits_and_does_not_push(remote: Path, home: Path) -> None:
    a = clone(remote, "a")
    git(a, "checkout", "--quiet", "-b", "local-only")
    before = tip(remote)
    store(a, home).remember(text="Local only", type="feedback", scope="team")
    result = sync_team_memory(store(a, home))
    assert (result.committed, result.pushed, result.skipped) == (True, False, "no-upstream"), result
    assert tip(remote) == before and git(a, "status", "--porcelain") == ""


def test_a_rejected_push_undoes_the_commit(remote: Path, home: Path) -> None:
    a = clone(remote, "a")
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho rejected by policy >&2\nexit 1\n")
    hook.chmod(0o755)
    head = git(a, "rev-parse", "HEAD")
    store(a, home).remember(text="Rejected entry", type="feedback", scope="team")
    result = sync_team_memory(store(a, home))
    assert (result.committed, result.pushed, result.skipped) == (True, False, "push-failed"), result
    assert git(a, "rev-parse", "HEAD") == head
    assert git(a, "diff", "--cached", "--name-only") == ""  # unstaged again
    assert (a / ".qwen" / "team-memory").is_dir()


def test_nothing_to_do_and_not_a_repository(remote: Path, home: Path, tmp_path: Path) -> None:
    a = clone(remote, "a")
    result = sync_team_memory(store(a, home))
    assert (result.pulled, result.committed, result.pushed, result.skipped) == (True, False, False, None)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert sync_team_memory(store(plain, home)).skipped == "not-a-git-repo"
    git(a, "checkout", "--quiet", "--detach")
    assert sync_team_memory(store(a, home)).skipped == "detached-head"


def test_the_environment_overrides_the_setting() -> None:
    assert sync_enabled(False, {"QWEN_CODE_MEMORY_TEAM_SYNC": "1"}) and not sync_enabled(True, {"QWEN_CODE_MEMORY_TEAM_SYNC": "0"})
    assert sync_enabled(True, {"QWEN_CODE_MEMORY_TEAM_SYNC": "yes"}) and not sync_enabled(False, {})


MARK = "PWNED"


def hostile(repo: Path, marker: Path) -> list[tuple[str, str]]:
    """Config entries that would run a program writing ``marker`` if git took them from the repository."""
    cmd = f"touch {marker}"
    return [
        ("core.hooksPath", str(repo / "hooks-dir")),
        ("core.fsmonitor", cmd),
        ("filter.evil.clean", cmd),
        ("filter.evil.smudge", cmd),
        ("filter.evil.process", cmd),
        ("core.sshCommand", cmd),
        ("remote.origin.uploadpack", f"{cmd}; git-upload-pack"),
        ("remote.origin.receivepack", f"{cmd}; git-receive-pack"),
        ("core.pager", cmd),
        ("gpg.program", cmd),
        ("commit.gpgSign", "true"),
        ("credential.helper", f"!{cmd}"),
        ("diff.external", cmd),
        ("core.askPass", cmd),
    ]


@pytest.mark.parametrize(
    "url",
    [
        None, "ext::sh -c 'touch {m}'", "fd::3", "./inside.git", "inside.git", "{a}/inside.git", "file://{a}/inside.git",
        "file://{a}/%69nside.git", "{a}/sub/../inside.git", "./link.git", "-uhelp", "ssh://-oProxyCommand=touch%20{m}/x",
        "--upload-pack=touch {m}", "ext::{a}/inside.git",
    ],
)
def test_nothing_the_repository_configures_runs(remote: Path, home: Path, tmp_path: Path, url: str | None) -> None:
    a = clone(remote, "a")
    marker = tmp_path / MARK
    if url is not None:
        inside = a / "inside.git"  # a remote planted in the checkout, holding main, with a hook of its own
        git(tmp_path, "init", "--quiet", "--bare", str(inside))
        git(a, "push", "--quiet", str(inside), "HEAD:refs/heads/main")
        (inside / "hooks" / "pre-receive").write_text(f"#!/bin/sh\ntouch {marker}\n")
        (inside / "hooks" / "pre-receive").chmod(0o755)
        (a / "sub").mkdir()
        (a / "link.git").symlink_to(inside)
        git(a, "config", "remote.origin.url", url.format(m=marker, a=a))
    for key, value in hostile(a, marker):
        git(a, "config", "--add", key, value)
    hooks = a / "hooks-dir"
    hooks.mkdir()
    for name in ("pre-commit", "post-commit", "post-merge", "pre-push", "reference-transaction", "post-checkout"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / name).chmod(0o755)
        (a / ".git" / "hooks" / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (a / ".git" / "hooks" / name).chmod(0o755)
    (a / ".gitattributes").write_text("* filter=evil\n")
    store(a, home).remember(text="Harmless entry", type="feedback", scope="team")
    result = sync_team_memory(store(a, home))
    assert not marker.exists(), result
    if url is None:
        assert result.pushed, result  # the remote itself is fine: the sync still works
    else:
        assert not result.pushed and result.skipped in ("pull-failed", "push-failed", "no-upstream"), result


def test_a_redirected_team_root_is_not_synced(remote: Path, home: Path, tmp_path: Path) -> None:
    a = clone(remote, "a")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "feedback").mkdir(parents=True)
    (a / ".qwen").mkdir()
    (a / ".qwen" / "team-memory").symlink_to(elsewhere)
    result = sync_team_memory(store(a, home))
    assert result.skipped == "team-root-redirected" and not result.committed


async def test_over_lsp_the_sync_shows_progress_warns_once_and_a_chat_goes_on(remote: Path, home: Path, tmp_path: Path) -> None:
    """The server syncs as a folder opens (user settings only), shows progress, tells a failure once, and answers chats meanwhile."""
    import json

    from lsprotocol import types
    from support.quiet_home import write_quiet_settings
    from support.scripted_openai import Reply, ScriptedOpenAI

    from lsp_harness import as_dict, chat, running_server, wait_for

    a, b = clone(remote, "a"), clone(remote, "b")
    (b / "theirs.txt").write_text("theirs\n")
    git(b, "add", "theirs.txt")
    git(b, "commit", "--quiet", "-m", "theirs")
    git(b, "push", "--quiet")
    (a / "ours.txt").write_text("ours\n")
    git(a, "add", "ours.txt")
    git(a, "commit", "--quiet", "-m", "ours")  # diverged: the sync must leave it alone and say so
    store(a, home).remember(text="Entry waiting to sync", type="feedback", scope="team")
    head = git(a, "rev-parse", "HEAD")
    # A project asking for the sync is not enough: only the user's layer switches it on.
    (a / ".qwen" / "settings.json").write_text(json.dumps({"memory": {"enableTeamMemorySync": True}}))
    write_quiet_settings(home, {"folderTrust": True, "memory": {"autoExtract": False, "autoDream": False, "enableTeamMemory": True}})
    with ScriptedOpenAI() as scripted:
        async with running_server(home, a, scripted.base_url) as client:
            scripted.enqueue(Reply(chunks=["hi"]))
            await chat(client, "hello")
        # shutdown drained the background work: a sync that had started would have been reported by now
        assert not any("Team memory" in m.message for m in client.messages)
        assert not any(isinstance(r[0], types.WorkDoneProgressBegin) and "team memory" in r[0].title for r in client.progress_reports.values())
        write_quiet_settings(
            home, {"folderTrust": True, "memory": {"autoExtract": False, "autoDream": False, "enableTeamMemory": True, "enableTeamMemorySync": True}}
        )
        async with running_server(home, a, scripted.base_url) as client:
            scripted.enqueue(Reply(chunks=["still here"]))
            assert as_dict(await chat(client, "hello again"))["text"] == "still here"
            await wait_for(lambda: any("Team memory sync" in m.message for m in client.messages), "the sync's warning")
            warnings = [m for m in client.messages if "Team memory sync" in m.message]
            assert len(warnings) == 1 and warnings[0].type == types.MessageType.Warning and "could not fast-forward" in warnings[0].message
            await wait_for(lambda: any(any(isinstance(r, types.WorkDoneProgressEnd) for r in rs) for rs in client.progress_reports.values()), "progress end")
            titles = [r[0].title for r in client.progress_reports.values() if isinstance(r[0], types.WorkDoneProgressBegin)]
            assert "Qwen: syncing team memory" in titles
    assert git(a, "rev-parse", "HEAD") == head
