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
expression (:func:`gitignore_regex`, git's grammar as the ``ignore`` package
implements it) and matched with RE2 (``matching/linear_regex.py``), so no
pattern can hang the listing; files, lines and patterns are bounded, and a
pattern RE2 refuses is skipped. RE2 is loaded only when an ignore file has a
pattern.
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
            body = f"/{base}/{any_depth}{body}"
        elif anchored:
            body = "/" + body
        regex = gitignore_regex(body)
        if regex is None:
            continue
        try:
            out.append(_Rule(compile_linear(regex), not negative))
        except LinearRegexError:
            log.debug("ignore pattern skipped (not linear-time): %.80s", line)
    return out


def gitignore_regex(pattern: str) -> str | None:
    """A gitignore pattern (no ``!``) as an RE2 regex over a root-relative path, matched from its start.

    git's rules, as the ``ignore`` package applies them: unescaped trailing
    spaces are dropped; a trailing ``/`` matches folders only (the path must
    go on past it); a ``/`` elsewhere anchors the pattern at the root, else it
    matches at any depth; ``*`` and ``?`` stop at ``/``; ``**`` as a whole
    segment spans folders; ``[...]`` is a class (``[!...]`` negated); ``\\``
    escapes. The regex also matches everything inside a matched folder.
    """
    text = pattern
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    text = text.lstrip("/")
    segments = text.split("/")
    if segments == ["**"]:
        return "^.*/" if dir_only else "^."  # everything (in a folder)
    parts: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            if index == 0:
                parts.append("(?:.*/)?")
            elif last:
                parts.append(".*")
            else:
                parts.append("(?:.*/)?")
            continue
        parts.append(_segment_regex(segment) + ("" if last else "/"))
    head = "^" if anchored or segments[0] == "**" else "^(?:.*/)?"
    return head + "".join(parts) + ("/" if dir_only else "(?:/|$)")


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        ch = segment[i]
        if ch == "\\" and i + 1 < n:
            out.append(_literal(segment[i + 1]))
            i += 2
            continue
        if ch == "*":
            while i + 1 < n and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            negate = i + 1 < n and segment[i + 1] in "!^"
            start = i + (2 if negate else 1)
            end = segment.find("]", start + 1)  # a "]" first in the class is one of its characters
            if end < 0:
                out.append(_literal(ch))
            else:
                inner = "".join(c if c == "-" else _literal(c) for c in segment[start:end])
                out.append(f"[{'^/' if negate else ''}{inner}]")
                i = end
        else:
            out.append(_literal(ch))
        i += 1
    return "".join(out)


def _literal(ch: str) -> str:
    """One character as RE2 reads it literally (``\\x{..}`` for anything but letters, digits and ``_``)."""
    return ch if ch.isascii() and (ch.isalnum() or ch == "_") else f"\\x{{{ord(ch):x}}}"


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
