"""Reading one scope's memory files into :class:`MemoryDoc` (Qwen Code's ``memory/scan.ts``).

What counts as a memory is Qwen Code's rule: any ``*.md`` below the root
except files named ``MEMORY.md``, starting with the frontmatter block
``---\n…\n---``, whose ``type:`` is one of the four topics. Keys are read
line by line with a regex — not YAML — so a file means the same thing to
both tools. ``title`` is ``name ?? title ?? type``; ``body`` is the trimmed
rest. Documents are ordered by modification time, newest first, then by
file name, and the scan keeps the first 200 (the cap Qwen Code 0.24.4 applies
for its index and listings); recall scans them all, as 0.24.4's
``scanAllAutoMemoryTopicDocuments`` does, so an old memory can still be
recalled when it answers the question.

Variant: the key regex and line endings follow the later Qwen Code (the
one shipped as the 0.24 CLI), which fixes two real bugs of the seed-era
parser: ``^key:\\s*(.+)$`` let an empty ``name:`` take the *next* line
(``type: user``) as its value, and a file saved with CRLF line endings was
silently ignored. Now the gap after the colon may not cross a line, and
CRLF is read as LF.

The memory roots hold content anyone with repository access (team) or any
earlier model run (project, user) may have written, so the scan is bounded
and forgiving:

* a file larger than :data:`MAX_FILE_BYTES` (64 KB) is skipped: a memory
  is a short note, the recall prompt cuts bodies at 1,200 characters, and
  reading a multi-megabyte file on every turn would stall recall;
* the walk visits at most :data:`MAX_WALK_ENTRIES` directory entries and
  :data:`MAX_DEPTH` levels, so a huge or looping tree cannot hang it;
* symlinks (files and directories) are never followed, so nothing outside
  the root is read through a link planted inside it;
* an unreadable file, invalid UTF-8, or a malformed frontmatter block skips
  that one file with a logged reason (the path, never the content).

Everything here blocks on the file system: call it from a worker thread.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ..files.portability import open_for_reading
from ..text.jstext import is_js_space, js_trim
from .model import TOPICS, MemoryDoc, Scope, Topic
from .paths import INDEX_FILENAME

log = logging.getLogger(__name__)

MAX_FILES = 200
MAX_FILE_BYTES = 64 * 1024
MAX_WALK_ENTRIES = 20_000
MAX_DEPTH = 8

_TERMINATORS = "\n\r\u2028\u2029"
_LINE_BREAK = re.compile(f"[{_TERMINATORS}]")
"""JS line terminators: where ``^`` may match in multiline mode and where ``.`` stops."""


@dataclass(frozen=True)
class ParsedMemory:
    """The fields of one memory file, before it is placed in a scope."""

    type: Topic
    title: str
    description: str
    body: str


def frontmatter_value(frontmatter: str, key: str) -> str | None:
    """``frontmatter.match(/^key:[^\\S\\n]*(.+)$/m)?.[1]?.trim()``, without a backtracking regex.

    The gap after the colon may hold any whitespace but ``\\n``, so an empty
    ``name:`` never swallows the next line's ``type: user`` as its value (the
    seed-era ``\\s*`` did). When only such whitespace follows up to a
    ``\\n`` or the end, the regex still matches a trailing space (value
    ``''``) unless every skipped character is a line terminator.
    """
    head = key + ":"
    n = len(frontmatter)
    for start in (0, *(m.end() for m in _LINE_BREAK.finditer(frontmatter))):
        if not frontmatter.startswith(head, start):
            continue
        gap = start + len(head)
        pos = gap
        while pos < n and frontmatter[pos] != "\n" and is_js_space(frontmatter[pos]):
            pos += 1
        if pos < n and frontmatter[pos] != "\n":
            brk = _LINE_BREAK.search(frontmatter, pos)
            return js_trim(frontmatter[pos : brk.start() if brk else n])
        if any(ch not in _TERMINATORS for ch in frontmatter[gap:pos]):
            return ""
    return None


def parse_memory(content: str) -> ParsedMemory | None:
    """The memory in ``content``, or None when it is not one (no frontmatter, or an unknown ``type``).

    CRLF becomes LF first (a file saved on Windows is still a memory), then
    ``/^---\\n([\\s\\S]*?)\\n---\\n?([\\s\\S]*)$/``: the block ends at the
    first ``\\n---`` after the opening line.
    """
    content = content.replace("\r\n", "\n")
    if not content.startswith("---\n"):
        return None
    close = content.find("\n---", 4)
    if close < 0:
        return None
    frontmatter = content[4:close]
    rest = content[close + 4 :]
    if rest.startswith("\n"):
        rest = rest[1:]
    topic = frontmatter_value(frontmatter, "type")
    if topic not in TOPICS:
        return None
    name = frontmatter_value(frontmatter, "name")
    title = name if name is not None else frontmatter_value(frontmatter, "title")
    description = frontmatter_value(frontmatter, "description")
    return ParsedMemory(
        type=topic,
        title=title if title is not None else topic,
        description=description or "",
        body=js_trim(rest),
    )


@dataclass(frozen=True)
class _Candidate:
    path: Path
    relative: str
    mtime: float
    size: int


def _walk(root: Path) -> list[_Candidate]:
    found: list[_Candidate] = []
    budget = MAX_WALK_ENTRIES
    stack: list[tuple[Path, str, int]] = [(root, "", 0)]
    while stack:
        directory, prefix, depth = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            log.info("memory scan: cannot list %s: %s", directory, exc.strerror or exc)
            continue
        for entry in entries:
            budget -= 1
            if budget < 0:
                log.warning("memory scan: stopped after %d entries under %s", MAX_WALK_ENTRIES, root)
                return found
            relative = f"{prefix}{entry.name}"
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                if depth < MAX_DEPTH:
                    stack.append((Path(entry.path), relative + "/", depth + 1))
                continue
            if not stat.S_ISREG(info.st_mode):
                continue  # symlinks, sockets, fifos: never followed or opened
            if not entry.name.endswith(".md") or entry.name == INDEX_FILENAME:
                continue
            found.append(_Candidate(Path(entry.path), relative, info.st_mtime, info.st_size))
    return found


def _read(candidate: _Candidate) -> str | None:
    if candidate.size > MAX_FILE_BYTES:
        log.info("memory scan: skipped %s (%d bytes, over %d)", candidate.path, candidate.size, MAX_FILE_BYTES)
        return None
    try:
        fd = open_for_reading(candidate.path, follow_links=False)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        log.info("memory scan: skipped %s (%s)", candidate.path, exc.strerror or exc)
        return None
    if len(data) > MAX_FILE_BYTES:
        log.info("memory scan: skipped %s (grew past %d bytes)", candidate.path, MAX_FILE_BYTES)
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        log.info("memory scan: skipped %s (not UTF-8)", candidate.path)
        return None


def scannable(root: Path) -> bool:
    """Whether :func:`scan_root` would look in ``root``: a directory itself, not a link (one ``lstat``)."""
    try:
        return stat.S_ISDIR(os.lstat(root).st_mode)
    except OSError:
        return False


def scan_root(root: Path, scope: Scope, *, limit: int | None = MAX_FILES) -> list[MemoryDoc]:
    """The memories under ``root`` (absent root → ``[]``), newest first, at most ``limit`` (None: all the
    walk reaches, as 0.24.4's uncapped scan for recall; the walk's own bounds still hold)."""
    if not scannable(root):
        return []
    candidates = _walk(root)
    candidates.sort(key=lambda c: (c.path.name, c.relative))
    candidates.sort(key=lambda c: c.mtime, reverse=True)
    docs: list[MemoryDoc] = []
    for candidate in candidates:
        if limit is not None and len(docs) >= limit:
            break
        content = _read(candidate)
        if content is None:
            continue
        parsed = parse_memory(content)
        if parsed is None:
            log.debug("memory scan: %s has no memory frontmatter with a known type", candidate.path)
            continue
        docs.append(
            MemoryDoc(
                scope=scope,
                type=parsed.type,
                path=candidate.path,
                relative_path=candidate.relative,
                title=parsed.title,
                description=parsed.description,
                body=parsed.body,
                mtime=candidate.mtime,
            )
        )
    return docs
