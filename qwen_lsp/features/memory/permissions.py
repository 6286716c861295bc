"""The permission rules of a memory fork (extraction, dream): ``memory-scoped-agent-config.ts``.

* ``write_file`` / ``edit``: denied under ``pinned/`` of a memory root
  (pinned memories are the user's, read-only to the model); allowed when
  the path — resolved through its nearest existing ancestor, after
  following a dangling leaf symlink, so a decoy link cannot route a write
  out — lies inside one of the writable roots; a team-memory path is
  never auto-allowed (it is committed to the repository, so a person must
  approve it: ``ask``, which in a fork means refused); anything else is
  denied. A path inside a writable root that really lies in a
  ``protected`` root (the user's memory, which every project's prompt
  reads) is denied too: a repository may link its project memory
  (``QWEN_CODE_MEMORY_LOCAL=1`` puts it at ``.qwen/memory`` in the
  repository) to ``~/.qwen/memories``, and the extraction fork, which
  learns from repository text, then wrote global memory through the link.
* ``run_shell_command``: allowed only when the command analyser
  (``shell/analysis.py``, the one every unattended path uses) finds it
  read-only in the workspace, with the memory roots also readable (the
  tool refuses the rest anyway; the rule says so first, with its name).
* Every other tool: no opinion (``default``), so the base rules decide.

Rule strings follow Qwen Code's shape, ``ManagedAutoMemory(edit: only
within <roots>)``, so a refusal tells the model what it may do instead.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...memory.forking import PATH_KEYS
from ...memory.paths import realpath_nearest_existing
from ...agent.permissions import NO_OPINION, Decision, PermissionRule, Verdict
from ...agent.tools.shell import NAME as SHELL, fork_allows

WRITE_TOOLS = frozenset({"write_file", "edit"})
PINNED = "pinned"


def _inside(path: Path, root: Path) -> Path | None:
    """``path`` relative to ``root`` when inside it (or equal), else None."""
    try:
        return path.relative_to(root)
    except ValueError:
        return None


def memory_rule(
    writable: Sequence[Path],
    *,
    team: Path | None = None,
    protect_pinned: bool = True,
    workspace: Path | None = None,
    protected: Sequence[Path] = (),
) -> PermissionRule:
    """The fork's rule: writes only inside ``writable`` roots and never inside ``protected`` ones, shell commands
    read-only in ``workspace`` (module doc).

    Without a ``workspace`` no shell command is allowed."""
    roots = [realpath_nearest_existing(r) for r in writable]
    team_root = realpath_nearest_existing(team) if team is not None else None
    within = ", ".join(str(r) for r in roots)
    only_within = Verdict(Decision.DENY, f"ManagedAutoMemory(edit: only within {within})")

    def rule(tool: str, args: Mapping[str, Any]) -> Verdict:
        if tool == SHELL:
            if workspace is None:
                return Verdict(Decision.DENY, "ManagedAutoMemory(run_shell_command: no workspace to run in)")
            allowed, why = fork_allows(str(args.get("command", "")), workspace, [workspace, *roots])
            if not allowed:
                return Verdict(Decision.DENY, f"ManagedAutoMemory(run_shell_command: read-only only; {why})")
            return Verdict(Decision.ALLOW, "ManagedAutoMemory(run_shell_command: read-only)")
        if tool not in WRITE_TOOLS:
            return NO_OPINION
        raw = next((args[k] for k in PATH_KEYS if isinstance(args.get(k), str) and args[k].strip()), None)
        if raw is None or "\x00" in raw or not os.path.isabs(raw.strip()):
            return only_within
        try:
            real = realpath_nearest_existing(Path(raw.strip()))
        except (OSError, RuntimeError):
            return only_within
        if team_root is not None and _inside(real, team_root) is not None:
            return Verdict(Decision.ASK, f"ManagedAutoMemory({tool}: team memory is shared through git; a person must approve)")
        for root in roots:
            rel = _inside(real, root)
            if rel is None:
                continue
            if protect_pinned and rel.parts[:1] == (PINNED,):
                return Verdict(Decision.DENY, f"ManagedAutoMemory({tool}: {PINNED}/ is read-only)")
            for mine in protected:
                if _inside(real, realpath_nearest_existing(mine)) is not None:
                    return Verdict(Decision.DENY, f"ManagedAutoMemory({tool}: {real} is in {mine}, which only the user writes)")
            return Verdict(Decision.ALLOW, f"ManagedAutoMemory({tool}: within {root})")
        return only_within

    return rule
