"""The one command analyser: may this shell command run without a person?

Every path that runs a command without asking goes through
:func:`analyse`: ``default``/``auto-edit``/``auto`` mode's read-only rule,
plan mode, the memory forks (extraction, dream) and speculation. It reads
the command with tree-sitter-bash (``syntax.py``), expands globs as bash
would, then judges each simple command:

* a read-only program (``programs.py``, ``find.py``, ``git.py``) with only
  options from its table, and every file it names (operands, ``--file=``
  values, ``< input``, ``cd`` targets, glob matches) resolving, symlinks
  followed, inside the allowed roots; the program itself found on ``PATH``
  outside them (a repository's ``./ls`` never runs in place of ``ls``);
* ``cd DIR`` inside the roots moves where later relative paths resolve.

The answer is Qwen Code 0.24.4's three-way one (``classifyShellCommandSafety``):
``read-only`` runs, ``write`` is known to change something (plan mode
refuses it), ``unknown`` asks. Where the CLI is more lenient, the cases are
listed in docs/security.md ("Commands").

Blocking (stats files, may run ``git config`` as data): call it off the event loop.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..files.containment import resolved_inside
from .find import judge_find
from .git import judge_git, risky_config
from .options import Refusal
from .programs import ALIASES, ASK_ALWAYS, PROGRAMS, WRITING_PROGRAMS, judge_options, judge_ps, judge_sed
from .syntax import NotPlain, Simple, Write, expand, parse

Safety = Literal["read-only", "write", "unknown"]
BUILTINS = frozenset({"cd", "echo", "printf", "pwd"})


@dataclass(frozen=True)
class Verdict:
    safety: Safety
    reason: str = ""

    @property
    def read_only(self) -> bool:
        return self.safety == "read-only"


READ_ONLY = Verdict("read-only")


def analyse(command: str, cwd: Path, roots: Sequence[Path], *, search_path: str | None = None) -> Verdict:
    """The verdict on ``command`` run with ``bash -c`` in ``cwd``, files allowed inside ``roots`` (module doc)."""
    try:
        script = parse(command)
    except Write as exc:
        return Verdict("write", str(exc))
    except NotPlain as exc:
        return Verdict("unknown", str(exc))
    checker = _Checker([r.resolve() for r in roots], search_path if search_path is not None else os.environ.get("PATH", ""))
    cwds = [cwd]
    worst = READ_ONLY
    for simple in script.commands:
        verdict = checker.judge(simple, cwds)
        if verdict.safety == "write":
            return verdict
        if worst.read_only and not verdict.read_only:
            worst = verdict
    return worst


def analyse_simple(simple: Simple, cwd: Path, roots: Sequence[Path], *, search_path: str | None = None) -> Verdict:
    """The verdict on one simple command of a parsed command, run in ``cwd``."""
    checker = _Checker([r.resolve() for r in roots], search_path if search_path is not None else os.environ.get("PATH", ""))
    return checker.judge(simple, [cwd])


def mentioned_paths(command: str) -> list[str]:
    """Every word of ``command`` and every file it redirects to, as text: what a write could reach.

    Plain commands give their words after quote removal; anything else its
    whitespace- and operator-separated pieces, quotes dropped (more pieces
    than bash's words, never fewer), for the protected-path question.
    """
    try:
        script = parse(command, keep_writes=True)
    except NotPlain:
        return [piece for piece in re.split(r"[\s'\"<>|;&()`$={}]+", command) if piece]
    words = [w.text for c in script.commands for w in c.words]
    return words + [r for c in script.commands for r in c.reads] + script.writes


def command_argv(simple: Simple, cwd: Path) -> list[str]:
    """The words bash passes, globs expanded from ``cwd``."""
    argv: list[str] = []
    for word in simple.words:
        argv.extend(expand(word, str(cwd)))
    return argv


class _Checker:
    def __init__(self, roots: list[Path], search_path: str) -> None:
        self._roots = roots
        self._search_path = search_path

    def judge(self, simple: Simple, cwds: list[Path]) -> Verdict:
        if simple.words[0].pattern is not None:
            return Verdict("unknown", "the command name is a glob")
        try:
            argvs = [command_argv(simple, cwd) for cwd in cwds]
        except NotPlain as exc:
            return Verdict("unknown", str(exc))
        name = argvs[0][0]
        if "/" in name or "\\" in name:
            return Verdict("unknown", f"'{name}' names a program by its path")
        for raw in simple.reads:
            outside = self._outside(raw, cwds)
            if outside:
                return Verdict("unknown", outside)
        if name in WRITING_PROGRAMS:
            return Verdict("write", f"'{name}' changes files")
        if name not in BUILTINS and name not in ASK_ALWAYS:
            for cwd in cwds:  # a relative PATH entry (".", "") is looked up from where the command runs
                search = os.pathsep.join(e if os.path.isabs(e) else os.path.join(cwd, e) for e in self._search_path.split(os.pathsep))
                found = shutil.which(name, path=search)
                if found is not None and any(resolved_inside(Path(found), root) is not None for root in self._roots):
                    return Verdict("unknown", f"'{name}' is found on PATH inside the workspace ({found})")
        for cwd, argv in zip(list(cwds), argvs):
            verdict = self._judge_one(name, argv[1:], cwd, cwds)
            if not verdict.read_only:
                return verdict
        return READ_ONLY

    def _judge_one(self, name: str, args: list[str], cwd: Path, cwds: list[Path]) -> Verdict:
        name = ALIASES.get(name, name)
        if name == "cd":
            return self._cd(args, cwd, cwds)
        if name in ASK_ALWAYS:
            return Verdict("unknown", ASK_ALWAYS[name])
        paths: list[str]
        refusal: Refusal | None
        if name == "git":
            refusal, paths = judge_git(args)
            if refusal is None:
                risky = risky_config(str(cwd))
                if risky is not None:
                    return Verdict("unknown", f"the repository's git configuration sets '{risky}', which can make git run programs")
                paths = [p for p in paths if os.path.lexists(cwd / p) or p.startswith("/") or ".." in p]
        elif name == "find":
            refusal, paths = judge_find(args)
        elif name == "sed":
            refusal, paths = judge_sed(args)
        elif name == "ps":
            refusal, paths = judge_ps(args), []
        elif name in PROGRAMS:
            parsed, operands = judge_options(name, args)
            refusal, paths = parsed.refusal, [*parsed.paths, *operands]
        else:
            return Verdict("unknown", f"'{name}' is not one of the read-only commands")
        if refusal is not None:
            return Verdict("write" if refusal.writes else "unknown", refusal.reason)
        for raw in paths:
            outside = self._outside(raw, [cwd])
            if outside:
                return Verdict("unknown", outside)
        return READ_ONLY

    def _cd(self, args: list[str], cwd: Path, cwds: list[Path]) -> Verdict:
        operands = [a for a in args if a not in ("-L", "-P", "--")]
        if len(operands) != 1 or operands[0] == "-" or operands[0].startswith("-"):
            return Verdict("unknown", "'cd' without one directory inside the workspace")
        target = self._inside(operands[0], cwd)
        if target is None:
            return Verdict("unknown", f"'cd {operands[0]}' leaves the workspace")
        if target not in cwds:
            cwds.append(target)  # it may or may not have happened ('||'): later paths must hold from both
        return READ_ONLY

    def _inside(self, raw: str, cwd: Path) -> Path | None:
        if "\x00" in raw:
            return None
        candidate = Path(raw) if os.path.isabs(raw) else cwd / raw
        for root in self._roots:
            found = resolved_inside(candidate, root)
            if found is not None:
                return found
        return None

    def _outside(self, raw: str, cwds: list[Path]) -> str | None:
        """Why ``raw`` is not a file inside the roots from every one of ``cwds``, or None."""
        if raw == "-":
            return None
        for cwd in cwds:
            try:
                if self._inside(raw, cwd) is None:
                    return f"'{raw}' is outside the workspace"
            except (OSError, ValueError):
                return f"'{raw}' cannot be checked"
        return None
