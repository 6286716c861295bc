"""Which files the startup folder listing leaves out, as Qwen Code 0.24.4's ``FileDiscoveryService`` decides.

0.24.4's ``getFolderStructure`` asks two filters about every entry it lists:

* git (``GitIgnoreParser``), only when the folder is in a git repository:
  ``.git`` itself, ``.git/info/exclude``, and every ``.gitignore`` from the
  root down to the entry's folder, a nested file's patterns rewritten to
  its folder (``/sub/**/name``), no deeper file read once a folder is itself
  ignored;
* qwen (``QwenIgnoreParser``): ``.qwenignore``, ``.agentignore`` and
  ``.aiignore`` at the root.

An ignored file is not listed at all; an ignored folder is listed as
``name/...`` and not entered. Both ask about a folder by its path *without*
a trailing slash, so a pattern meant for folders only (``build/``) does not
hide the folder ``build`` itself, only what is in it; 0.24.4 lists such a
folder, empty, and so does this.

The patterns are a repository's text: each line is turned into a regular
expression by pathspec's gitignore translation (the grammar the ``ignore``
package implements) and matched with RE2 (``matching/linear_regex.py``), so
no pattern can hang the listing; files, lines and patterns are bounded, and
a pattern RE2 refuses is skipped.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

from ..files.reading import read_bytes
from ..matching.linear_regex import LinearRegexError, compile_linear

log = logging.getLogger(__name__)

QWEN_IGNORE_FILES = (".qwenignore", ".agentignore", ".aiignore")
MAX_IGNORE_FILE_BYTES = 256 * 1024
MAX_PATTERNS_PER_FILE = 2_000
MAX_PATTERN_CHARS = 1_000


@dataclass(frozen=True)
class _Rule:
    regex: Any
    include: bool


def _rules(lines: list[str], base: str) -> list[_Rule]:
    """One file's patterns as rules; ``base`` is the file's folder relative to the root (``""`` at the root)."""
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern  # only when a listing meets an ignore file

    out: list[_Rule] = []
    for raw in lines[:MAX_PATTERNS_PER_FILE]:
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line.strip() or line.startswith("#") or len(line) > MAX_PATTERN_CHARS:
            continue
        negative = line.startswith("!")
        body = line[1:] if negative else line
        anchored = body.startswith("/")
        body = body[1:] if anchored else body
        if not body:
            continue
        if base:  # 0.24.4's loadPatternsForFile: a nested file's patterns are anchored at its folder
            bare = body[:-1] if body.endswith("/") else body
            any_depth = "" if anchored or "/" in bare else "**/"
            body = f"{base}/{any_depth}{body}"
        try:
            regex, include = GitIgnoreSpecPattern.pattern_to_regex(("!" if negative else "") + body)
        except (ValueError, TypeError):
            continue
        if regex is None or include is None:
            continue
        try:
            out.append(_Rule(compile_linear(regex), bool(include)))
        except LinearRegexError:
            log.debug("ignore pattern skipped (not linear-time): %.80s", line)
    return out


def _read_lines(path: str) -> list[str]:
    try:
        data = read_bytes(path, MAX_IGNORE_FILE_BYTES)
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").split("\n")


def _ignores(rules: list[_Rule], rel: str) -> bool:
    """Last matching rule wins, as in gitignore."""
    ignored = False
    for rule in rules:
        if rule.regex.search(rel) is not None:
            ignored = rule.include
    return ignored


@dataclass
class ListingIgnore:
    """The two filters for one listing root; folders' ``.gitignore`` files are read once each."""

    root: str
    in_git: bool
    _qwen: list[_Rule] = field(default_factory=list)
    _base: list[_Rule] | None = None
    _per_dir: dict[str, list[_Rule]] = field(default_factory=dict)

    @classmethod
    def for_root(cls, root: str, in_git: bool) -> ListingIgnore:
        found = cls(root=root, in_git=in_git)
        for name in QWEN_IGNORE_FILES:
            found._qwen.extend(_rules(_read_lines(os.path.join(root, name)), ""))
        return found

    def ignored(self, path: str) -> bool:
        """Whether 0.24.4 leaves ``path`` (under the root, asked without a trailing slash) out."""
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        if rel in ("", ".") or rel.startswith("../"):
            return False
        if self.in_git and (".git" in rel.split("/") or _ignores(self._git_rules(os.path.dirname(path)), rel)):
            return True  # ``.git`` is 0.24.4's first git pattern; checked by name, so no pattern is compiled for it
        return bool(self._qwen) and _ignores(self._qwen, rel)

    def _git_rules(self, leaf: str) -> list[_Rule]:
        """0.24.4's ``getIgnorerForDir``: the exclude file, then each ``.gitignore`` from the root to ``leaf``."""
        if self._base is None:
            self._base = _rules(_read_lines(os.path.join(self.root, ".git", "info", "exclude")), "")
        rules = list(self._base)
        rel_leaf = os.path.relpath(leaf, self.root).replace(os.sep, "/")
        parts = [] if rel_leaf in ("", ".") else rel_leaf.split("/")
        for depth in range(len(parts) + 1):
            rel_dir = "/".join(parts[:depth])
            if rel_dir and _ignores(rules, rel_dir + "/"):
                break
            if rel_dir not in self._per_dir:
                self._per_dir[rel_dir] = _rules(_read_lines(os.path.join(self.root, rel_dir, ".gitignore")), rel_dir)
            rules.extend(self._per_dir[rel_dir])
        return rules
