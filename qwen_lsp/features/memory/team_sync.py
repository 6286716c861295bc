"""Team memory sync: ``.qwen/team-memory/`` kept in step with the git remote at session start, as Qwen Code 0.24.4.

0.24.4 (``packages/core/src/memory/team-memory-sync.ts``, ``syncTeamMemory``, called from
``Config.refreshMemory``) does, when ``memory.enableTeamMemorySync`` (or
``QWEN_CODE_MEMORY_TEAM_SYNC=1``) and team memory are on, in a trusted folder:

1. skip a folder that is not in a git repository, or on a detached ``HEAD``;
2. with an upstream: note whether the branch was already ahead of it, then ``git pull --ff-only``;
   a pull that fails (a diverged branch, an unreachable remote) ends the sync there: nothing is
   committed or pushed, the branch is left alone;
3. when ``.qwen/team-memory/`` has changes: ``git add`` and ``git commit -- <that folder>`` (only
   it, whatever else is staged or modified), ``--no-gpg-sign``, "chore(memory): sync team memory";
4. no upstream: stop after the commit; a branch that was already ahead: stop too (the user's other
   unpushed commits are theirs to push); otherwise ``git push <remote> HEAD:<upstream ref>``, an
   explicit refspec; if that fails the commit is undone (``reset --soft``) and the files unstaged.

One difference, in the order: 0.24.4 rebuilds the team ``MEMORY.md`` index before the pull and
again after one, so an index changed (or first written) since the last sync — any team write
rebuilds it — makes the fast-forward refuse as soon as a collaborator's push changed the index
too. Here the index is put back as committed (removed, when it never was) before the pull and
rebuilt after it, so the collaborator's entries are in the index the commit carries.

Git runs through ``context/git_sync.py`` (none of the repository's hooks, filters or configured
programs). The whole sync runs on a worker thread in the background: no chat waits for it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ...context.git_sync import GitRunner, git_runner
from ...errors import EngineError
from ...memory.errors import TeamMemorySecurityError
from ...memory.paths import INDEX_FILENAME
from ...memory.store import MemoryStore

log = logging.getLogger(__name__)

COMMIT_MESSAGE = "chore(memory): sync team memory"


@dataclass
class SyncResult:
    pulled: bool = False
    committed: bool = False
    pushed: bool = False
    skipped: str | None = None
    """0.24.4's ``skippedReason``: not-a-git-repo, detached-head, pull-failed, no-upstream, local-ahead, push-failed."""
    detail: str = ""
    """git's own words for a failure."""


def sync_enabled(setting: bool, env: Mapping[str, str]) -> bool:
    """0.24.4's ``getTeamMemorySyncEnabled``: ``QWEN_CODE_MEMORY_TEAM_SYNC`` ``0``/``1`` overrides the setting."""
    override = env.get("QWEN_CODE_MEMORY_TEAM_SYNC")
    return override == "1" if override in ("0", "1") else setting


def sync_team_memory(store: MemoryStore) -> SyncResult:
    """Blocking: one sync of the team memory folder with its repository's upstream (see the module docstring)."""
    team = store.root("team")
    try:
        store.index_text("team")  # a redirected root blocks the sync, as 0.24.4's TeamMemoryRootSecurityError
    except TeamMemorySecurityError as exc:
        return SyncResult(skipped="team-root-redirected", detail=exc.message)
    try:
        with git_runner(str(store.paths.repo_root)) as git:
            return _sync(git, store, team)
    except (ValueError, OSError) as exc:
        return SyncResult(skipped="not-a-git-repo", detail=str(exc))


def _rebuild(store: MemoryStore) -> None:
    try:
        store.rebuild_index("team")
    except (OSError, EngineError) as exc:
        log.warning("team memory index not rebuilt: %s", exc)


def _set_index_aside(git: GitRunner, team: Path, index: str) -> None:
    """The generated index as committed (or gone, when it never was), so a collaborator's index can fast-forward over it; rebuilt after the pull."""
    if git("ls-files", "--error-unmatch", "--", index).ok:
        git("checkout", "--quiet", "--", index)
        return
    path = team / INDEX_FILENAME
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)


def _sync(git: GitRunner, store: MemoryStore, team: Path) -> SyncResult:
    result = SyncResult()
    top = git("rev-parse", "--show-toplevel")
    if not top.ok:
        return SyncResult(skipped="not-a-git-repo", detail=top.err.strip())
    rel = os.path.relpath(os.path.realpath(team), top.out.strip()).replace(os.sep, "/")
    branch = git("symbolic-ref", "--quiet", "--short", "HEAD")
    if not branch.ok or not branch.out.strip():
        return SyncResult(skipped="detached-head")
    branch_name = branch.out.strip()
    upstream = git("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}")
    was_ahead = False
    if upstream.ok:
        ahead = git("rev-list", "@{u}..HEAD")
        was_ahead = ahead.ok and bool(ahead.out.strip())
        _set_index_aside(git, team, f"{rel}/{INDEX_FILENAME}")
        pulled = git("pull", "--ff-only", "--quiet", "--no-rebase")
        result.pulled = pulled.ok
        if not pulled.ok:
            _rebuild(store)
            return SyncResult(skipped="pull-failed", detail=pulled.err.strip())
    _rebuild(store)
    status = git("status", "--porcelain", "--untracked-files=all", "--", rel)
    if status.ok and status.out.strip():
        staged = git("add", "--", rel).ok
        committed = git("commit", "--no-gpg-sign", "--quiet", "-m", COMMIT_MESSAGE, "--", rel)
        result.committed = committed.ok
        if not committed.ok:
            result.detail = committed.err.strip()
            if staged:
                git("reset", "--quiet", "--", rel)
    if not upstream.ok:
        result.skipped = "no-upstream"
        return result
    if not result.committed:
        return result
    if was_ahead:
        result.skipped = "local-ahead"
        return result
    ours = git("rev-parse", "HEAD").out.strip()
    remote = git("config", "--get", f"branch.{branch_name}.remote").out.strip()
    merge = git("config", "--get", f"branch.{branch_name}.merge").out.strip()
    if not remote or not merge:
        result.skipped = "push-failed"
        return result
    pushed = git("push", "--quiet", "--no-verify", remote, f"HEAD:{merge}")
    result.pushed = pushed.ok
    if not pushed.ok:
        result.skipped, result.detail = "push-failed", pushed.err.strip()
        remote_tip = git("ls-remote", remote, merge).out
        if git("rev-parse", "HEAD").out.strip() == ours and ours not in remote_tip:
            git("reset", "--quiet", "--soft", f"{ours}^")
            git("reset", "--quiet", "--", rel)
    return result


FAILURES = {"pull-failed", "push-failed", "team-root-redirected"}
"""Outcomes the user is told about (once per session); the rest are ordinary states, logged."""


def describe(result: SyncResult) -> str:
    """In words, for the progress end and the warning."""
    if result.skipped == "pull-failed":
        return f"Team memory sync: could not fast-forward from the upstream (a diverged branch or an unreachable remote); nothing was committed or pushed. {result.detail}".strip()
    if result.skipped == "push-failed":
        return f"Team memory sync: the push failed; the team memory changes are left uncommitted. {result.detail}".strip()
    if result.skipped == "team-root-redirected":
        return f"Team memory sync skipped: {result.detail}"
    if result.skipped == "local-ahead":
        return "Team memory committed; not pushed, since the branch already had unpushed commits."
    if result.skipped == "no-upstream":
        return "Team memory committed; the branch has no upstream, so nothing was pushed." if result.committed else "No upstream: nothing to sync."
    if result.skipped:
        return f"Team memory not synced: {result.skipped}."
    parts = [w for w, on in (("pulled", result.pulled), ("committed", result.committed), ("pushed", result.pushed)) if on]
    return "Team memory synced: " + (", ".join(parts) or "nothing to do") + "."
