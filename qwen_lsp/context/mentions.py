"""``@path`` in a typed message: the files it names, read into the turn as Qwen Code 0.24.4's ``@`` does.

The parse is 0.24.4's ``parseAllAtCommands`` (``packages/cli/src/ui/hooks/atCommandProcessor.ts``):
an ``@`` not preceded by ``\\`` starts a path that runs to whitespace or one of ``,;!?()[]{}``
(``\\`` escapes the next character, so ``@my\\ file.txt`` names ``my file.txt``), and a ``.``
followed by whitespace or the end closes it (``see @a.py.``); a lone ``@`` and ``@http(s)://…``
are text. Each path is taken relative to the workspace folder and kept only when it resolves
(links followed) inside it, exists, and is not left out by ``.gitignore`` or the qwen ignore files
(``listing_ignore.py``), as 0.24.4 skips those. A folder stands for the files in it, as 0.24.4's
``<folder>/**``, up to :data:`MAX_FOLDER_FILES`. What is read, and how much, is the attachments'
business (``attachments.py``): bounded, binary refused. The message text keeps its ``@path``
words, as 0.24.4's does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from .attachments import Attachment
from .listing_ignore import ListingIgnore
from .prompts import is_git_repository

MAX_MENTIONS = 20
"""Paths read from one message at most; further mentions stay plain text."""
MAX_FOLDER_FILES = 50
_STOP = re.compile(r"[,\s;!?()\[\]{}]")


def parse_mentions(text: str) -> list[str]:
    """The ``@`` paths of ``text`` in order, unescaped, without the ``@`` (URLs and lone ``@`` left out)."""
    found: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        at = text.find("@", i)
        while at > 0 and text[at - 1] == "\\":
            at = text.find("@", at + 1)
        if at < 0:
            break
        end = at + 1
        escaped = False
        while end < n:
            ch = text[end]
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif _STOP.match(ch):
                break
            elif ch == "." and (end + 1 == n or text[end + 1].isspace()):
                break
            end += 1
        raw = text[at + 1 : end]
        i = end if end > at else at + 1
        if not raw or re.match(r"https?://", raw, re.IGNORECASE):
            continue
        found.append(re.sub(r"\\(.)", r"\1", raw))
    return found


def mentioned_files(text: str, root: Path, attached: Sequence[Attachment] = ()) -> list[Attachment]:
    """Blocking: the files ``text`` mentions, as attachments, each once; nothing outside ``root`` or ignored,
    nothing already ``attached`` whole (the panel attaches the file an ``@`` completion picked)."""
    names = parse_mentions(text)[:MAX_MENTIONS] if "@" in text else []
    if not names:
        return []
    root = root.resolve()
    ignore = ListingIgnore.for_root(str(root), is_git_repository(str(root)))
    out: list[Attachment] = []
    seen: set[Path] = set()
    for att in attached:
        if att.start_line is None:
            try:
                seen.add(att.path.resolve())
            except (OSError, RuntimeError):
                pass
    for name in names:
        candidate = Path(name) if os.path.isabs(name) else root / name
        try:
            real = candidate.resolve()
        except (OSError, RuntimeError):
            continue
        if not real.is_relative_to(root) or ignore.ignored(str(candidate)) or ignore.ignored(str(real)):
            continue
        if real.is_dir():
            files = _folder_files(real, root, ignore)
        elif real.is_file():
            files = [real]
        else:
            continue
        for path in files:
            if path not in seen:
                seen.add(path)
                out.append(Attachment(path=path))
    return out


def _folder_files(folder: Path, root: Path, ignore: ListingIgnore) -> list[Path]:
    """The folder's files, breadth first, sorted, not entering links or ignored folders, bounded."""
    out: list[Path] = []
    queue = [folder]
    while queue and len(out) < MAX_FOLDER_FILES:
        current = queue.pop(0)
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.name == ".git" or ignore.ignored(entry.path):
                continue
            if entry.is_dir(follow_symlinks=False):
                queue.append(path)
            elif entry.is_file(follow_symlinks=False) and len(out) < MAX_FOLDER_FILES:
                out.append(path)
    return out
