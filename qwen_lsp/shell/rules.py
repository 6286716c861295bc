"""What "Allow always" on a shell command covers: Qwen Code 0.24.4's command-prefix rules.

0.24.4 (``extractCommandRules``) turns each simple command of an approved
command into a rule: the program, then — for tools with subcommands
(``git``, ``npm``, ``docker``…) — the subcommand, then `` *`` when more
words follow: ``git commit -m x`` → ``git commit *``, ``ls -la`` →
``ls *``. Only the parts that were not read-only become rules (the others
never ask). We take the first word that is not an option as the subcommand
of those tools (0.24.4 takes it only when it is in its list of known
subcommands; ours is never wider).

A later command is covered when it is plain (``syntax.py``: no expansion,
no substitution, no writing redirection) and every simple command in it is
read-only (``analysis.py``) or matches a rule, and no word of it names a
file outside the workspace: ``rm *`` allowed for ``rm build/x`` does not
let ``rm -rf /`` or ``rm ../x`` run without a question.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path

from ..files.containment import resolved_inside
from .analysis import analyse_simple
from .syntax import NotPlain, Simple, Word, Write, parse

SUBCOMMAND_TOOLS = frozenset(
    "git npm npx yarn pnpm bun docker podman pip pip3 uv poetry cargo go kubectl helm make gradle mvn dotnet".split()
)


def rule_for(words: Sequence[str]) -> str:
    """0.24.4's rule for one simple command's words (name first)."""
    name, args = words[0], list(words[1:])
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 1
    if name in SUBCOMMAND_TOOLS and name != "make" and index < len(args):
        rule = f"{name} {args[index]}"
        return rule + " *" if index + 1 < len(args) else rule
    return f"{name} *" if args else name


def _matches(rule: str, words: Sequence[str]) -> bool:
    if rule.endswith(" *"):
        prefix = rule[:-2].split(" ")
        return list(words[: len(prefix)]) == prefix
    return list(words) == rule.split(" ")


def command_rules(command: str, cwd: Path, roots: Sequence[Path]) -> tuple[str, ...]:
    """The rules "Allow always" adds for ``command``; empty when it cannot be read as plain (then only "Allow")."""
    try:
        script = parse(command)
    except (NotPlain, Write):
        return ()
    rules: list[str] = []
    for simple in script.commands:
        words = [w.text for w in simple.words]
        if not analyse_simple(simple, cwd, roots).read_only:
            rule = rule_for(words)
            if rule not in rules:
                rules.append(rule)
    return tuple(rules)


def covered(command: str, cwd: Path, roots: Sequence[Path], allowed: Collection[str]) -> bool:
    """Whether every part of ``command`` is read-only or matches one of ``allowed`` (module doc). Blocking."""
    try:
        script = parse(command)
    except (NotPlain, Write):
        return False
    for simple in script.commands:
        if analyse_simple(simple, cwd, roots).read_only:
            continue
        words = [w.text for w in simple.words]
        if any(w.pattern is not None for w in simple.words) or not _inside(simple, cwd, roots):
            return False
        if not any(_matches(rule, words) for rule in allowed):
            return False
    return True


def _inside(simple: Simple, cwd: Path, roots: Sequence[Path]) -> bool:
    """Every argument that looks like a path (absolute, ``..``, ``~``) resolves inside the roots."""
    resolved_roots = [r.resolve() for r in roots]
    for word in [*simple.words[1:], *(Word(r) for r in simple.reads)]:
        value = word.text.split("=", 1)[1] if word.text.startswith("-") and "=" in word.text else word.text
        if not (os.path.isabs(value) or ".." in value.split("/") or value.startswith("~")):
            continue
        candidate = Path(value) if os.path.isabs(value) else cwd / value
        if not any(resolved_inside(candidate, root) is not None for root in resolved_roots):
            return False
    return True
