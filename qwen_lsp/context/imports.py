"""``@path`` imports inside context files, matching Qwen Code 0.24's ``memoryImportProcessor.ts``.

A context file may pull another file in by writing ``@./other.md`` after
whitespace. This module finds those references with a scanner (not a
regex), leaves code alone where Qwen Code does (see :mod:`.code_regions`), refuses anything that leaves the
project or names a URL, stops at depth 5, and marks cycles instead of
looping. Two output formats exist, as in Qwen Code:

* ``tree`` (default): each import is replaced in place by the imported
  text between ``<!-- Imported from: … -->`` / ``<!-- End of import from: … -->``;
* ``flat``: every distinct file once, as ``--- File: <abs> ---`` blocks.

Behaviour is the latest-observed one that 0.24 ships (a missing file keeps
its ``@path`` text silently; flat mode honours the depth limit). Problems
never raise: they become comments in the text, as in Qwen Code, plus a
logged warning and a :class:`Problem`.

Two defences go beyond Qwen Code, because the repository is untrusted
(docs/security.md); without symlinks or huge import graphs the output is
byte for byte Qwen Code's:

* its path check is lexical; ours checks again after resolving symlinks
  (:mod:`.containment`), so a link to ``/etc/passwd`` or to a directory
  outside the project is refused with an ``Import failed`` comment;
* it has no limit on fan-out: six files each importing the next sixteen
  times make a 13.7 MB prompt (16⁵ expansions). One context build imports
  at most :data:`MAX_IMPORTED_BYTES` of text in at most
  :data:`MAX_IMPORTS` expansions; past that, each import becomes an
  ``Import failed`` comment. Reads are memoised per build, so a file
  imported many times is read once.
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
from ..files.containment import POSIX as _POSIX, RealPaths, child_of, is_live_state, is_subpath, parent_of, split_path
from ..files.reading import kept_error
from .text import (
    GitAncestry,
    Problem,
    decode_text,
    lexical_abspath,
    node_error_message,
    read_bytes,
)
from ..text.jstext import js_trim

log = logging.getLogger(__name__)

MAX_IMPORT_DEPTH = 5
MAX_IMPORTED_BYTES = 1 << 20
"""Imported text per context build (every file, every expansion): far above real instruction files."""
MAX_IMPORTS = 1000
"""Import expansions per context build: bounds the work on graphs of many tiny files."""
_LIMIT_MESSAGE = f"Import limit reached ({MAX_IMPORTS} imports or {MAX_IMPORTED_BYTES >> 20} MiB per context build)"
_OUTSIDE_MESSAGE = "Symlink resolves outside the project"
_LIVE_STATE_MESSAGE = "Resolves into /proc or /sys"
_TOO_BIG_MESSAGE = f"File larger than the {MAX_IMPORTED_BYTES >> 20} MiB import limit"
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
    return [ImportRef(*ref) for ref in _scan(content)]


def _scan(content: str) -> list[tuple[int, int, str]]:
    """:func:`find_imports` as plain tuples, for the expansion loop (a named tuple costs a Python-level call each)."""
    refs: list[tuple[int, int, str]] = []
    find, path_end = content.find, _PATH_END.search
    i = find("@")
    while i != -1:
        if i and content[i - 1] not in _WHITESPACE:
            i = find("@", i + 1)
            continue
        end = path_end(content, i + 1)
        j = end.start() if end else len(content)
        path = content[i + 1 : j]
        if path and path[0] in _PATH_START:
            refs.append((i, j, path))
        i = find("@", j + 1)
    return refs


def _resolve_import(path: str, base_dir: str, project_root: str) -> str | None:
    """The absolute target, or ``None`` when it is a URL or lies outside the project.

    ``base_dir`` is the importing file's directory, itself inside the
    project (the context file's, or an import's that passed this check).
    """
    if _POSIX and path[0] != "/" and base_dir != "/":
        # A plain relative path ("./a/b.md", "a/b.md", "name": nearly every import): with no "." or ".."
        # segment, no empty one and no trailing "/", normpath has nothing to change after a leading "./",
        # and the path stays below base_dir, so inside the project. (A URL has "//": not plain.)
        rel = path[2:] if path[:2] == "./" else path
        if rel and "/." not in "/" + rel and "//" not in path and rel[-1] != "/":
            return f"{base_dir}/{rel}"
    if path.startswith(_URL_SCHEMES):
        return None
    # base_dir is absolute: path.resolve(base_dir, path).
    full = os.path.normpath(os.path.join(base_dir, path) if path[0] == "/" else child_of(base_dir, path))
    return full if is_subpath(project_root, full) else None


class LeavesProject(OSError):
    """An import whose file is a symlink leading outside the project, or into ``/proc`` or ``/sys``; ``strerror`` says which."""


def _failure(exc: OSError, candidate: str) -> OSError:
    """A failed read as the import comment reports it: too big for the budget, or as ``open`` said."""
    return OSError(errno.EFBIG, _TOO_BIG_MESSAGE, candidate) if exc.errno == errno.EFBIG else kept_error(exc)


@dataclass
class ImportTrace:
    """What one context build's expansions looked at and spent: targets, problems, the import budget."""

    dependencies: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)
    ancestry: GitAncestry = field(default_factory=GitAncestry)  # the walk to .git, once per pass
    real_paths: RealPaths = field(default_factory=RealPaths)
    imported_bytes: int = 0
    imports: int = 0
    _reads: dict[str, bytes | OSError] = field(default_factory=dict)
    _warned: set[Problem] = field(default_factory=set)

    def warn(self, path: str, message: str) -> None:
        """Log and list a problem once per build (a file imported many times repeats its own)."""
        problem = Problem(path, message)
        if problem not in self._warned:
            self._warned.add(problem)
            log.warning("%s: %s", path, message)
            self.problems.append(problem)

    def load(self, candidate: str, root: str) -> bytes | OSError:
        """A target's bytes (directories already resolved), read once per build however often it is imported.

        The file is opened without following a final symlink; only if it is
        one is the link resolved, and a :class:`LeavesProject` given when it
        leads outside ``root``. A file larger than the whole import budget
        is refused before it is read (EFBIG), so a huge file in the
        repository is never loaded. A failure is returned, not raised: a
        missing target is common (an ``@`` in code) and raising it again on
        every import of it costs more than the failed ``open``.
        """
        data = self._reads.get(candidate)
        if data is None:
            data = self._reads[candidate] = self._read(candidate, root)
        return data

    def _read(self, candidate: str, root: str) -> bytes | OSError:
        if is_live_state(candidate):
            return LeavesProject(errno.EACCES, _LIVE_STATE_MESSAGE, candidate)
        try:
            return read_bytes(candidate, max_size=MAX_IMPORTED_BYTES, follow_links=False)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                return _failure(exc, candidate)
        real = self.real_paths.inside(candidate, root)  # the file itself is a symlink: where does it lead?
        if real is None:
            return LeavesProject(errno.EACCES, _OUTSIDE_MESSAGE, candidate)
        if is_live_state(real):
            return LeavesProject(errno.EACCES, _LIVE_STATE_MESSAGE, candidate)
        try:
            return read_bytes(real, max_size=MAX_IMPORTED_BYTES)
        except OSError as exc:
            return _failure(exc, candidate)

    def admit(self, size: int, current: str, path: str) -> bool:
        """Spend one import of ``size`` bytes from the budget; warn once when it runs out."""
        if self.imports < MAX_IMPORTS and self.imported_bytes + size <= MAX_IMPORTED_BYTES:
            self.imports += 1
            self.imported_bytes += size
            return True
        if self.imports <= MAX_IMPORTS:
            self.imports = MAX_IMPORTS + 1  # warned: later refusals are comments only
            self.warn(current, f"import '{path}' refused, and every later one in this build: {_LIMIT_MESSAGE}")
        return False


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
    return expand_file(content, lexical_abspath(file_path), import_format, max_depth, trace)


def expand_file(content: str, file_path: str, import_format: str, max_depth: int, trace: ImportTrace) -> str:
    """:func:`process_imports` for a ``file_path`` already absolute and normalised (discovery's, built from such parts)."""
    base_dir = split_path(file_path)[0]
    root = trace.ancestry.project_root(base_dir) or base_dir
    if import_format == "flat":
        return _expand_flat(content, file_path, root, max_depth, trace)
    if max_depth <= 0:
        return _at_depth_limit(content, max_depth, file_path, trace)
    refs = _scan(content) if "@" in content else None
    if not refs:
        return content
    return _expand_tree(content, refs, base_dir, root, frozenset({file_path}), 0, max_depth, file_path, trace)


def _at_depth_limit(content: str, max_depth: int, current: str, trace: ImportTrace) -> str:
    trace.warn(current, f"maximum import depth ({max_depth}) reached; its imports are left as text")
    return content


def _expand_tree(
    content: str,
    refs: list[tuple[int, int, str]],
    base_dir: str,
    root: str,
    chain: frozenset[str],
    depth: int,
    max_depth: int,
    current: str,
    trace: ImportTrace,
) -> str:
    """``content`` with its ``refs`` (its :func:`_scan`, not empty) expanded; ``depth`` is below ``max_depth``.

    The hot loop of a cold build: the two memos (directories resolved for
    ``root``, targets read) are asked inline, so a repeated directory or
    target costs a dict lookup, not a call.
    """
    code: CodeRegions | None = None  # made at the first question: most files are never asked (their targets are missing)
    out: list[str] = []
    append = out.append
    last = 0
    add_dependency, parent_inside = trace.dependencies.add, trace.real_paths.parent_inside
    resolved_dirs, load = trace.real_paths.dirs_inside(root), trace.load
    for start, end, path in refs:
        append(content[last:start])
        last = end
        full = _resolve_import(path, base_dir, root)
        real = None
        if full is None:
            refusal = ("refused: outside the project or a URL", f"<!-- Import failed: {path} - Path traversal attempt -->")
        else:
            add_dependency(full)
            if full in chain:
                refusal = ("is a cycle; marked as already processed", f"<!-- File already processed: {path} -->")
            else:
                cut = full.rfind("/")
                real_dir = resolved_dirs.get(full[:cut]) if _POSIX else None
                if real_dir:  # the directory was resolved inside the root earlier in this build
                    real = real_dir + full[cut + 1 :]
                elif (real := parent_inside(full, root)) is None:
                    refusal = ("refused: a symlink leads outside the project", f"<!-- Import failed: {path} - {_OUTSIDE_MESSAGE} -->")
        if real is None:
            if (code or (code := CodeRegions(content))).contains(start):  # inside code it is not an import at all
                append("@" + path)
            else:
                trace.warn(current, f"import '{path}' {refusal[0]}")
                append(refusal[1])
            continue
        assert full is not None
        # Read first, ask about code after: most targets exist and are not in code,
        # so this costs one open() where a separate existence check would cost two calls.
        data = load(real, root)
        if isinstance(data, OSError):
            if data.errno == errno.ENOENT or (code or (code := CodeRegions(content))).contains(start):
                append("@" + path)  # missing (kept silently, as 0.24) or in code
            else:
                append(_failed_import(data, path, full, current, trace))
            continue
        if (code or (code := CodeRegions(content))).contains(start):
            append("@" + path)
            continue
        if not trace.admit(len(data), current, path):
            append(f"<!-- Import failed: {path} - {_LIMIT_MESSAGE} -->")
            continue
        text = decode_text(data, full, trace.problems)
        if depth + 1 >= max_depth:
            text = _at_depth_limit(text, max_depth, full, trace)
        elif "@" in text and (inner := _scan(text)):  # most imported files import nothing: no call for them
            text = _expand_tree(text, inner, parent_of(full), root, chain | {full}, depth + 1, max_depth, full, trace)
        append(f"<!-- Imported from: {path} -->\n{text}\n<!-- End of import from: {path} -->")
    append(content[last:])
    return "".join(out)


def _failed_import(data: OSError, path: str, full: str, current: str, trace: ImportTrace) -> str:
    """The comment that replaces an import whose target exists but could not be read, warned once."""
    if isinstance(data, LeavesProject):
        why = "a symlink leads outside the project" if data.strerror == _OUTSIDE_MESSAGE else "it resolves into /proc or /sys"
        trace.warn(current, f"import '{path}' refused: {why}")
        return f"<!-- Import failed: {path} - {data.strerror} -->"
    message = node_error_message(data, full)
    trace.warn(current, f"import '{path}' failed: {message}")
    return f"<!-- Import failed: {path} - {message} -->"


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
            real = None if full is None else trace.real_paths.parent_inside(full, root)
            if full is None or real is None:
                if not code.contains(ref.start):
                    why = "outside the project or a URL" if full is None else "a symlink leads outside the project"
                    trace.warn(path, f"import '{ref.path}' refused: {why}")
                continue
            trace.dependencies.add(full)
            child_seen = expanded_at.get(full)
            if child_seen is not None and child_seen <= depth + 1:
                continue
            if not os.path.lexists(full) or code.contains(ref.start):
                continue
            data = trace.load(real, root)
            if isinstance(data, LeavesProject):
                trace.warn(path, f"import '{ref.path}' refused: a symlink leads outside the project")
                continue
            if isinstance(data, OSError):
                if data.errno != errno.ENOENT:
                    trace.warn(path, f"import '{ref.path}' failed: {node_error_message(data, full)}")
                continue
            if full not in expanded_at and not trace.admit(len(data), path, ref.path):
                continue
            visit(decode_text(data, full, trace.problems), os.path.dirname(full), full, depth + 1)

    visit(content, os.path.dirname(file_path), file_path, 0)
    return "\n\n".join(f"--- File: {p} ---\n{js_trim(t)}\n--- End of File: {p} ---" for p, t in files)
