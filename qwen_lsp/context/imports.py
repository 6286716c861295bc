"""``@path`` imports inside context files (spec §3), matching Qwen Code 0.24's output.

A context file may pull another file in by writing ``@./other.md`` after
whitespace. This module finds those references with a scanner (not a
regex), leaves code alone where Qwen Code does (see :mod:`.code_regions`), refuses anything that leaves the
project or names a URL, stops at depth 5, and marks cycles instead of
looping. Two output formats exist, as in Qwen Code:

* ``tree`` (default): each import is replaced in place by the imported
  text between ``<!-- Imported from: … -->`` / ``<!-- End of import from: … -->``;
* ``flat``: every distinct file once, as ``--- File: <abs> ---`` blocks.

Behaviour is the latest-observed one that 0.24 ships (a missing file keeps
its ``@path`` text silently; flat mode honours the depth limit; path
validation is lexical). Problems never raise: they become comments in the
text, as in Qwen Code, plus a logged warning and a :class:`Problem`.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import string
from dataclasses import dataclass, field
from typing import NamedTuple

from .code_regions import CodeRegions
from .text import (
    GitAncestry,
    Problem,
    decode_text,
    is_subpath,
    js_trim,
    lexical_abspath,
    node_error_message,
    read_bytes,
    read_text,
)

log = logging.getLogger(__name__)

MAX_IMPORT_DEPTH = 5
_WHITESPACE = " \t\n\r"
_URL_SCHEMES = ("file://", "http://", "https://")
_PATH_END = re.compile(r"[ \t\n\r]")  # a path runs to the next whitespace (found in C, not in a loop)
_PATH_START = "./" + string.ascii_letters


class ImportRef(NamedTuple):
    """One ``@path`` (a tuple: files with many references build many of these)."""

    start: int  # offset of the '@'
    end: int  # offset just past the path
    path: str


def find_imports(content: str) -> list[ImportRef]:
    """Every ``@path`` that starts a word: after whitespace or at offset 0.

    The path runs to the next whitespace, trailing punctuation included,
    and must begin with ``.``, ``/`` or an ASCII letter, so ``foo@bar.com``,
    ``(@./x)``, ``@123`` and ``@~/x`` are not imports.
    """
    refs: list[ImportRef] = []
    find = content.find
    i = find("@")
    while i != -1:
        if i and content[i - 1] not in _WHITESPACE:
            i = find("@", i + 1)
            continue
        end = _PATH_END.search(content, i + 1)
        j = end.start() if end else len(content)
        path = content[i + 1 : j]
        if path and path[0] in _PATH_START:
            refs.append(ImportRef(i, j, path))
        i = find("@", j + 1)
    return refs


def _resolve_import(path: str, base_dir: str, project_root: str) -> str | None:
    """The absolute target, or ``None`` when it is a URL or lies outside the project."""
    if path.startswith(_URL_SCHEMES):
        return None
    full = os.path.normpath(os.path.join(base_dir, path))  # base_dir is absolute: path.resolve(base_dir, path)
    return full if is_subpath(project_root, full) else None


@dataclass
class ImportTrace:
    """What an expansion looked at: every import target (found or not) and the problems."""

    dependencies: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)
    ancestry: GitAncestry = field(default_factory=GitAncestry)  # the walk to .git, once per pass

    def warn(self, path: str, message: str) -> None:
        log.warning("%s: %s", path, message)
        self.problems.append(Problem(path, message))


def process_imports(
    content: str,
    file_path: str,
    *,
    import_format: str = "tree",
    max_depth: int = MAX_IMPORT_DEPTH,
    trace: ImportTrace | None = None,
) -> str:
    """Expand the imports of one context file at absolute ``file_path``.

    The project root that bounds imports is the nearest ``.git`` ancestor of
    the file's directory, or that directory itself (as Qwen Code computes
    it when the caller gives none).
    """
    trace = trace if trace is not None else ImportTrace()
    file_path = lexical_abspath(file_path)
    base_dir = os.path.dirname(file_path)
    root = trace.ancestry.project_root(base_dir) or base_dir
    if import_format == "flat":
        return _expand_flat(content, file_path, root, max_depth, trace)
    return _expand_tree(content, base_dir, root, frozenset({file_path}), 0, max_depth, file_path, trace)


def _expand_tree(
    content: str,
    base_dir: str,
    root: str,
    chain: frozenset[str],
    depth: int,
    max_depth: int,
    current: str,
    trace: ImportTrace,
) -> str:
    if depth >= max_depth:
        trace.warn(current, f"maximum import depth ({max_depth}) reached; its imports are left as text")
        return content
    refs = find_imports(content)
    if not refs:
        return content
    code = CodeRegions(content)
    out: list[str] = []
    last = 0
    for ref in refs:
        out.append(content[last : ref.start])
        last = ref.end
        path = ref.path
        full = _resolve_import(path, base_dir, root)
        refusal = None
        if full is None:
            refusal = ("refused: outside the project or a URL", f"<!-- Import failed: {path} - Path traversal attempt -->")
        else:
            trace.dependencies.add(full)
            if full in chain:
                refusal = ("is a cycle; marked as already processed", f"<!-- File already processed: {path} -->")
        if refusal is not None:
            if code.contains(ref.start):  # inside code it is not an import at all
                out.append("@" + path)
            else:
                trace.warn(current, f"import '{path}' {refusal[0]}")
                out.append(refusal[1])
            continue
        assert full is not None
        # Read first, ask about code after: most targets exist and are not in code,
        # so this costs one open() where a separate existence check would cost two calls.
        try:
            data = read_bytes(full)
        except OSError as exc:
            if exc.errno == errno.ENOENT or code.contains(ref.start):
                out.append("@" + path)  # missing (kept silently, as 0.24) or in code
                continue
            message = node_error_message(exc, full)
            trace.warn(current, f"import '{path}' failed: {message}")
            out.append(f"<!-- Import failed: {path} - {message} -->")
            continue
        if code.contains(ref.start):
            out.append("@" + path)
            continue
        text = decode_text(data, full, trace.problems)
        inner = _expand_tree(
            text, os.path.dirname(full), root, chain | {full}, depth + 1, max_depth, full, trace
        )
        out.append(f"<!-- Imported from: {path} -->\n{inner}\n<!-- End of import from: {path} -->")
    out.append(content[last:])
    return "".join(out)


def _expand_flat(content: str, file_path: str, root: str, max_depth: int, trace: ImportTrace) -> str:
    """Each file once, in first-encounter order; imports walked last to first (as 0.24)."""
    files: list[tuple[str, str]] = []
    expanded_at: dict[str, int] = {}

    def visit(text: str, base_dir: str, path: str, depth: int) -> None:
        seen = expanded_at.get(path)
        if seen is not None and seen <= depth:
            return
        if seen is None:
            files.append((path, text))
        expanded_at[path] = depth
        if depth >= max_depth:
            trace.warn(path, f"maximum import depth ({max_depth}) reached; its imports are not expanded")
            return
        code = CodeRegions(text)
        for ref in reversed(find_imports(text)):
            full = _resolve_import(ref.path, base_dir, root)
            if full is None:
                if not code.contains(ref.start):
                    trace.warn(path, f"import '{ref.path}' refused: outside the project or a URL")
                continue
            trace.dependencies.add(full)
            child_seen = expanded_at.get(full)
            if child_seen is not None and child_seen <= depth + 1:
                continue
            if not os.path.lexists(full) or code.contains(ref.start):
                continue
            try:
                child = read_text(full, trace.problems)
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    trace.warn(path, f"import '{ref.path}' failed: {node_error_message(exc, full)}")
                continue
            visit(child, os.path.dirname(full), full, depth + 1)

    visit(content, os.path.dirname(file_path), file_path, 0)
    return "\n\n".join(f"--- File: {p} ---\n{js_trim(t)}\n--- End of File: {p} ---" for p, t in files)
