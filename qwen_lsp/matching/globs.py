"""Conditional activation: which ``paths:`` globs does an opened file match (``skill-activation.ts``, ``rulesDiscovery.ts``).

Shared by conditional skills and conditional rules, which Qwen Code matches
the same way (picomatch, ``dot: true``, project-relative paths).

Globs follow picomatch with ``dot: true`` (the seed-era choice): ``*`` and
``**`` also match dot files, so ``**/*.js`` fires for ``.eslintrc.js``;
braces, ranges, extglobs and globstar work; a leading ``!`` negates. Each
glob is brace-expanded and compiled by :mod:`qwen_lsp.matching.safe_glob` for
linear-time matching: these globs come from the repository, so a hostile
``**/+(?|?)Q`` must not hold the event loop on every ``didOpen``. A glob
that cannot be compiled safely is dropped with a problem naming it, and the
item's other globs keep working.

Speed: ``didOpen`` must decide in well under a millisecond with thousands
of globs, so :class:`ActivationIndex` never scans them all. Each expanded
glob is filed under two necessary conditions read off its text — the
literal directory prefix it starts with and the literal extension its last
segment ends with — and a path only tries the buckets its own prefixes and
extension select. Globs with neither (``**/*``) land in one catch-all
bucket. Translated globs are cached by pattern text, so a refresh after one
SKILL.md edit only translates what changed, and each regex is compiled the
first time a path reaches its bucket (see ``lazy`` in ``safe_glob``).
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from ..background import pace
from .safe_glob import InvalidGlob, Matcher, compile_alternative, compile_any, expand_braces

__all__ = ["ActivationIndex", "CompiledGlob", "DroppedGlob", "InvalidGlob", "compile_glob", "project_relative"]

MAX_GLOB_LENGTH = 65536
"""picomatch's default ``maxLength``: longer patterns throw and are dropped."""
MAX_NEGATED_EXTGLOBS = 16
"""Globs holding a ``!(...)`` per index: each costs up to a few ms per path (see ``safe_glob``), on every didOpen."""

_MAGIC = frozenset("*?[]{}()!+@\\")


@dataclass(frozen=True)
class CompiledGlob:
    """One brace alternative of a glob, ready to match project-relative posix paths."""

    matches: Matcher
    negated: bool
    prefix: str
    """Literal leading directories (``src/api``), or ``""``."""
    ext: str | None
    """Literal extension the basename must end with (``ts``), or None."""


@dataclass(frozen=True)
class DroppedGlob:
    skill: str
    """The name the glob belongs to (a skill, or a rule's path)."""
    pattern: str
    message: str


@functools.lru_cache(maxsize=16384)
def compile_glob(pattern: str) -> tuple[CompiledGlob, ...]:
    """Compile one ``paths:`` entry; raises :class:`InvalidGlob`."""
    if len(pattern) > MAX_GLOB_LENGTH:
        raise InvalidGlob(f"Input length: {len(pattern)}, exceeds maximum allowed length: {MAX_GLOB_LENGTH}")
    negated = pattern.startswith("!") and not pattern.startswith("!(")
    body = pattern[1:] if negated else pattern
    while body.startswith("./"):
        body = body[2:]
    alternatives = expand_braces(body)
    alternatives += [bare for bare in map(_without_trailing_globstar, alternatives) if bare]
    if negated:  # `!{a,b}` is "neither a nor b": one matcher over every alternative
        return (CompiledGlob(compile_any(alternatives, lazy=True), True, "", None),)
    return tuple(
        CompiledGlob(compile_alternative(alt, lazy=True), False, *_literal_keys(alt)) for alt in alternatives
    )


def _without_trailing_globstar(alt: str) -> str | None:
    """``dir/**`` also matches ``dir`` in picomatch (not after a ``*``: ``a*/**`` needs a child)."""
    if not alt.endswith("/**"):
        return None
    bare = alt
    while bare.endswith("/**"):
        bare = bare[:-3]
    return bare if bare and not bare.endswith("*") else None


def _literal_keys(alternative: str) -> tuple[str, str | None]:
    """The literal directory prefix and final extension a glob requires."""
    segments = alternative.split("/")
    prefix: list[str] = []
    for seg in segments[:-1]:
        if not seg or seg == "." or any(c in _MAGIC for c in seg):
            break
        prefix.append(seg)
    last = segments[-1]
    cut = max((i for i, c in enumerate(last) if c in _MAGIC), default=-1)
    tail = last[cut + 1 :]
    ext = tail.rsplit(".", 1)[1] if "." in tail else None
    return "/".join(prefix), ext


def _path_ext(rel: str) -> str | None:
    base = rel.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[1] if "." in base else None


def project_relative(path: Path | str, root: Path) -> str | None:
    """``path`` relative to ``root`` as a posix string; None when outside the root.

    Lexical, as the seed-era ``matchAndConsume``: relative inputs resolve
    against the root; ``..`` segments are folded without touching the disk.
    """
    raw = str(path)
    joined = raw if PurePath(raw).is_absolute() else posixpath.join(str(root), raw)
    full = posixpath.normpath(joined.replace("\\", "/"))
    base = posixpath.normpath(str(root).replace("\\", "/"))
    if full == base:
        return None
    head = base if base.endswith("/") else base + "/"
    if not full.startswith(head):
        return None
    return full[len(head) :]


class ActivationIndex:
    """Globs of many named items (skills, rules), bucketed for fast lookup.

    Built once per refresh from ``(name, globs)`` in precedence order;
    invalid globs are dropped and listed in :attr:`dropped`.
    """

    def __init__(self, conditional: Sequence[tuple[str, Sequence[str]]]) -> None:
        self.names: list[str] = [name for name, _ in conditional]
        self.dropped: list[DroppedGlob] = []
        self._buckets: dict[tuple[str, str | None], list[tuple[Matcher, bool, int]]] = {}
        negations = 0
        for index, (name, globs) in enumerate(conditional):
            pace()  # built on a worker thread for 1,500 skills: let the event loop in
            for pattern in globs:
                if "!(" in pattern:
                    negations += 1
                    if negations > MAX_NEGATED_EXTGLOBS:
                        message = f"more than {MAX_NEGATED_EXTGLOBS} globs with a negated extglob !(...) in one set"
                        self.dropped.append(DroppedGlob(name, pattern, message))
                        continue
                try:
                    parts = compile_glob(pattern)
                except InvalidGlob as exc:
                    self.dropped.append(DroppedGlob(name, pattern, str(exc)))
                    continue
                for part in parts:
                    self._buckets.setdefault((part.prefix, part.ext), []).append((part.matches, part.negated, index))
        self._prefixes = frozenset(prefix for prefix, _ in self._buckets)

    def __len__(self) -> int:
        return len(self.names)

    def match(self, rel: str, skip: Callable[[str], bool] = lambda _n: False) -> list[str]:
        """Names (not ``skip``-ped) with a glob matching ``rel``, in precedence order."""
        hit: set[int] = set()
        ext = _path_ext(rel)
        for prefix in self._candidate_prefixes(rel):
            for key in ((prefix, ext), (prefix, None)) if ext is not None else ((prefix, None),):
                for matches, negated, index in self._buckets.get(key, ()):
                    if index in hit or skip(self.names[index]):
                        continue
                    if matches(rel) != negated:
                        hit.add(index)
        return [self.names[i] for i in sorted(hit)]

    def _candidate_prefixes(self, rel: str) -> Iterable[str]:
        """``""`` and every directory above ``rel`` that some glob starts with."""
        yield ""
        cut = rel.find("/")
        while cut >= 0:
            if rel[:cut] in self._prefixes:
                yield rel[:cut]
            cut = rel.find("/", cut + 1)
