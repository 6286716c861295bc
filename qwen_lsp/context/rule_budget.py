"""How many rule files, and how many bytes of them, one context build reads.

Imports are capped (``imports.py``); rules were not: 2,000 rule files of
10 KB made a 21.8 MB request, stalled the event loop for seconds while it
was sent and recorded, and peaked at over 450 MB. Qwen Code 0.24.4 reads
every rule; a repository controls how many there are, so one build here
reads at most :data:`MAX_RULE_FILES` files and :data:`MAX_RULE_BYTES`
bytes of them, in the order rules are loaded (the user's ``~/.qwen/rules``
first, so a repository cannot crowd them out). The walk that finds them
stops after :data:`MAX_WALK_ENTRIES` directory entries. What is left out is
named in one problem (the context inspector and ``doctor`` show it).
"""

from __future__ import annotations

import errno
import logging
import os

from ..files.reading import read_bytes
from .text import Problem, decode_text

log = logging.getLogger(__name__)

MAX_RULE_FILES = 1000
MAX_RULE_BYTES = 1 << 20
MAX_WALK_ENTRIES = 50_000
_NAMED = 5
LIMIT = f"{MAX_RULE_FILES} rule files or {MAX_RULE_BYTES >> 20} MiB of rules per context build"


class RuleBudget:
    """One build's allowance; :meth:`read` hands out files until it is spent."""

    def __init__(self) -> None:
        self.files = 0
        self.bytes = 0
        self.left_out: list[str] = []
        self.walk_cut: list[str] = []

    def read(self, path: str, problems: list[Problem]) -> str | None:
        """The rule's text, or None when the budget leaves it out (``OSError`` for real read failures)."""
        room = MAX_RULE_BYTES - self.bytes
        if self.files >= MAX_RULE_FILES or room <= 0:
            self.left_out.append(path)
            return None
        try:
            data = read_bytes(path, max_size=room)
        except OSError as exc:
            if exc.errno != errno.EFBIG:
                raise
            self.left_out.append(path)
            return None
        self.files += 1
        self.bytes += len(data)
        return decode_text(data, path, problems)

    def report(self, problems: list[Problem]) -> None:
        """One problem naming what was left out, if anything was."""
        if self.left_out:
            names = ", ".join(self.left_out[:_NAMED]) + (f", and {len(self.left_out) - _NAMED} more" if len(self.left_out) > _NAMED else "")
            message = f"{len(self.left_out)} rule file(s) left out: the limit of {LIMIT} was reached ({names})"
            log.warning("%s", message)
            problems.append(Problem("rules", message))
        for directory in self.walk_cut:
            message = f"rule search stopped after {MAX_WALK_ENTRIES} entries; rules further down {directory} were not looked for"
            log.warning("%s", message)
            problems.append(Problem(directory, message))


def collect_md(directory: str, budget: RuleBudget) -> list[str]:
    """Every ``*.md`` file below ``directory`` (as before: links to directories followed), without recursion.

    An explicit stack, so a tree nested thousands deep cannot raise
    ``RecursionError``; at most :data:`MAX_WALK_ENTRIES` entries are looked at.
    """
    found: list[str] = []
    stack = [directory]
    seen = 0
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            seen += 1
            if seen > MAX_WALK_ENTRIES:
                budget.walk_cut.append(directory)
                return found
            try:
                if entry.is_dir():
                    stack.append(entry.path)
                elif entry.is_file() and entry.name.endswith(".md"):
                    found.append(entry.path)
            except OSError:
                continue
    return found
