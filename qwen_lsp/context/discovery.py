"""Hierarchical discovery of ``QWEN.md`` / ``AGENTS.md`` (as Qwen Code 0.24's ``memoryDiscovery.ts``).

The order of the blocks is what the model reads as precedence, so it must
be exactly Qwen Code's:

* **grouped by filename**: for each name in the list (``QWEN.md`` then
  ``AGENTS.md``), the global ``~/.qwen/<name>`` first, then the upward scan
  from cwd, outermost first;
* the upward scan stops at the parent of the git root (a ``.git``
  directory *or file*), that stop directory included; with no git root it
  stops at the parent of HOME; it never enters ``~/.qwen``; unlike Qwen
  Code it never goes above HOME (docs/security.md, "Settings trust": the
  directories above are other users' and the system's);
* when cwd is HOME, only ``~/<name>`` is looked at (no scan);
* extra files (``output-language.md``) after every filename group;
* ``<git root>/.qwen/QWEN.local.md`` last, only when there is a real git
  root and the folder is trusted;
* duplicates removed by real path, the first lexical path kept.

An untrusted folder gets only the global files. Subdirectories below cwd
are never scanned. A context file inside the project (the git root, or cwd
without one) that is a symlink leading outside it is refused with a
warning, unlike Qwen Code, which reads it (docs/security.md): the
repository must not put ``/etc/passwd`` or ``/proc/self/environ`` in the prompt.
A file the upward scan finds above the project must stay in its own
directory, and no context file may resolve into ``/proc`` or ``/sys``. Each file is read as UTF-8 (bad bytes replaced),
imports expanded, and attached as a ``--- Context from: <path relative to
cwd> ---`` block if its trimmed text is not blank.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ..text.visible import prompt_name
from ..files.containment import RealPaths, ancestors, child_of, is_live_state, is_subpath, parent_of
from ..files.reading import kept_error
from .imports import MAX_IMPORT_DEPTH, ImportTrace, expand_file
from .text import (
    GitAncestry,
    Problem,
    decode_text,
    lexical_abspath,
    read_bytes,
    relative_path,
)
from ..text.jstext import js_trim

log = logging.getLogger(__name__)

LOCAL_CONTEXT_FILENAME = "QWEN.local.md"
MAX_CONTEXT_FILE_BYTES = 4 << 20
"""A context file larger than this is reported and skipped, not read: a cloned repository
must not be able to make every turn load gigabytes (Qwen Code has no cap; 4 MiB is far
past any model's window, so no real QWEN.md is affected)."""
QWEN_DIR = ".qwen"


class ContextFile(NamedTuple):
    """One listed context file (a tuple: a cold build makes one per file, and a frozen dataclass costs three times as much)."""

    path: str  # absolute, lexical
    display: str  # path relative to cwd, as in the block markers
    content: str | None  # imports expanded; None when the file could not be read

    @property
    def attached(self) -> bool:
        return self.content is not None and bool(js_trim(self.content))

    def block(self) -> str:
        assert self.content is not None
        return _block(self.display, js_trim(self.content))


def _block(display: str, body: str) -> str:
    return f"--- Context from: {display} ---\n{body}\n--- End of Context from: {display} ---"


@dataclass
class Discovery:
    """The result of one discovery pass, with everything needed to know when it goes stale."""

    files: list[ContextFile]
    project_root: str | None  # the real git root, if any
    scanned_dirs: list[str]  # directories where a new context file would change the result
    dependencies: set[str] = field(default_factory=set)  # every file read or looked for by imports
    problems: list[Problem] = field(default_factory=list)

    def text(self) -> str:
        blocks = []
        for f in self.files:
            if f.content is not None and (body := js_trim(f.content)):  # attached: trimmed once, not twice
                blocks.append(_block(f.display, body))
        return "\n\n".join(blocks)


def _read_context_file(path: str, real_paths: RealPaths) -> bytes:
    """A context file's bytes, a final symlink followed (as Node's ``readFile``); ``OSError`` as ``open`` gives.

    The file is opened without following a final link first: the usual file
    is no link, and then its containment check (:func:`_refusal`) needs no
    ``lstat`` of its own. Only a link is opened a second time, following it;
    where it leads is checked before its bytes are used.
    """
    try:
        data = read_bytes(path, max_size=MAX_CONTEXT_FILE_BYTES, follow_links=False)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        return read_bytes(path, max_size=MAX_CONTEXT_FILE_BYTES)
    real_paths.not_a_link(path)
    return data


def _open_if_readable(path: str, found: dict[str, bytes | OSError], problems: list[Problem], real_paths: RealPaths) -> bool:
    """Whether Node's ``fs.access(path, R_OK)`` passes; what was read is kept in ``found``.

    Most candidates are missing (two names in every directory up to the
    project root), so existence is asked first, with ``access(F_OK)``: a
    failed ``access`` costs a third of a failed ``open``, which raises, and
    one call settles a missing file (asking ``R_OK`` first needed a second
    call to tell missing from unreadable). A file that exists is read at
    once and its bytes kept for later; a readable *directory* is listed too
    and then fails to read with EISDIR, as in Qwen Code. One whose ``open``
    is refused (EACCES: what ``R_OK`` would have said) is reported and
    skipped, where Qwen Code skips it without a word.
    """
    if not os.access(path, os.F_OK):
        return False
    try:
        found[path] = _read_context_file(path, real_paths)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):  # gone since access said yes
            return False
        if exc.errno == errno.EACCES:
            message = "exists but cannot be read; skipped"
            log.warning("%s: %s", path, message)
            problems.append(Problem(path, message))
            return False
        found[path] = kept_error(exc)
    return True


def _scan_dirs(cwd: str, home: str, global_dir: str, root: str | None) -> list[str]:
    """The directories of the upward scan, innermost first (the filesystem root and what is above HOME are never scanned)."""
    stop = os.path.dirname(root) if root else os.path.dirname(home)
    home_qwen = os.path.join(home, QWEN_DIR)
    dirs: list[str] = []
    for cur in ancestors(cwd)[:-1]:  # the last is the filesystem root
        if cur == global_dir or cur == home_qwen:
            break
        dirs.append(cur)
        if cur == stop or cur == home:
            break
    return dirs


def _listed(
    cwd: str,
    filenames: Sequence[str],
    home: str,
    global_dir: str,
    trusted: bool,
    extra_paths: Sequence[str],
    ancestry: GitAncestry,
    real_paths: RealPaths,
    problems: list[Problem],
    shown: dict[str, str] | None = None,
) -> tuple[list[str], dict[str, bytes | OSError], str | None, list[str]]:
    """Context file paths in order, read, not yet deduped by real path; also the git root and the scanned directories.

    ``cwd``, ``home`` and ``global_dir`` are absolute and normalised. ``shown`` receives, for each file the upward scan found, its path relative to ``cwd``.
    """
    shown = {} if shown is None else shown
    root = ancestry.project_root(cwd)
    if cwd == home:  # lexical, as Qwen Code compares them: a symlink to HOME is not HOME
        dirs = [home]
    elif trusted:
        dirs = _scan_dirs(cwd, home, global_dir, root)
    else:
        dirs = []
    scanned = [global_dir, *(d for d in dirs if d != global_dir)]
    ups = {directory: "../" * levels for levels, directory in enumerate(dirs)}  # cwd and its ancestors, relative to cwd
    ordered: list[str] = []
    found: dict[str, bytes | OSError] = {}
    for name in filenames:
        global_path = child_of(global_dir, name)
        if global_path in found or _open_if_readable(global_path, found, problems, real_paths):
            ordered.append(global_path)
        for directory in reversed(dirs):
            candidate = child_of(directory, name)
            if candidate != global_path and (candidate in found or _open_if_readable(candidate, found, problems, real_paths)):
                ordered.append(candidate)
                shown[candidate] = ups[directory] + name  # path.relative(cwd, candidate), without asking
    ordered.extend(extra_paths)
    if trusted and root is not None:
        local = os.path.join(root, QWEN_DIR, LOCAL_CONTEXT_FILENAME)
        scanned.append(os.path.join(root, QWEN_DIR))
        if local in found or _open_if_readable(local, found, problems, real_paths):
            ordered.append(local)
    listed = list(dict.fromkeys(ordered))
    for path in listed:
        if path not in found:  # an extra path: listed by its caller, read here
            try:
                found[path] = _read_context_file(path, real_paths)
            except OSError as exc:
                found[path] = kept_error(exc)
    return listed, found, root, scanned


def context_file_paths(
    cwd: str,
    filenames: Sequence[str],
    *,
    home: str,
    global_dir: str,
    trusted: bool,
    extra_paths: Sequence[str] = (),
) -> tuple[list[str], str | None, list[str]]:
    """Ordered, de-duplicated context file paths; also the git root and the scanned directories."""
    paths, found, root, scanned = _listed(
        lexical_abspath(cwd), filenames, lexical_abspath(home), lexical_abspath(global_dir), trusted, extra_paths, GitAncestry(), RealPaths(), []
    )
    return _dedupe_by_realpath(paths, found), root, scanned


def _dedupe_by_realpath(paths: list[str], found: dict[str, bytes | OSError]) -> list[str]:
    """Keep the first lexical path of each real file (0.24's canonical dedupe).

    ``realpath`` is slow, and it is only needed when two paths may be one
    file, so it is computed only then (see :func:`_may_share_a_file`).
    """
    if not _may_share_a_file(paths, found):
        return paths
    seen: set[str] = set()
    kept: list[str] = []
    for path in paths:
        try:
            real = os.path.realpath(path, strict=True)
        except OSError:
            real = lexical_abspath(path)
        if real not in seen:
            seen.add(real)
            kept.append(path)
    return kept


def _may_share_a_file(paths: list[str], found: dict[str, bytes | OSError]) -> bool:
    """Whether two of ``paths`` can be one real file, judged by what was read: no syscall as a rule.

    One file read twice gives the same bytes, so files whose bytes differ
    (in length, or at the first byte ``memcmp`` finds) are distinct. A
    failed read says nothing, so then (rarely) inodes are compared.
    """
    by_length: dict[int, list[bytes]] = {}
    for path in paths:
        data = found[path]
        if isinstance(data, OSError):
            return _inodes_collide(paths)
        same_length = by_length.setdefault(len(data), [])
        if data in same_length:
            return True
        same_length.append(data)
    return False


def _inodes_collide(paths: list[str]) -> bool:
    inodes: set[tuple[int, int]] = set()
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in inodes:
            return True
        inodes.add((st.st_dev, st.st_ino))
    return False


def display_path(path: str, cwd: str) -> str:
    return prompt_name(relative_path(path, cwd) if os.path.isabs(path) else path)


def _display(path: str, cwd: str, shown: dict[str, str]) -> str:
    """:func:`display_path`, from the scan's own answer when it has one."""
    relative = shown.get(path)
    return display_path(path, cwd) if relative is None else prompt_name(relative)


def _refusal(path: str, project: str, global_dir: str, extra_paths: Sequence[str], real_paths: RealPaths) -> str | None:
    """Why a listed context file may not be read into the prompt, or ``None``.

    Each file is checked against the tree it was found in, symlinks
    followed: a file inside the project must stay in the project, and one
    found by the upward scan *above* it (``<parent>/QWEN.md``) must stay in
    its own directory, since a repository unpacked into a folder, or whoever
    shares a parent folder such as ``/tmp``, chooses those as well. The
    user's global files and the extra files are the user's own and may lead
    anywhere. No file, the user's included, may resolve into ``/proc``
    or ``/sys``. ``project`` and ``global_dir`` end with a separator (a cold
    build asks this for every file, so the prefixes are made once).
    """
    real = real_paths.real(path)
    if path.startswith(project):
        allowed: str | None = project[:-1] or os.sep
        where = "the project"
    elif path.startswith(global_dir) or path in extra_paths:
        allowed = None
    else:
        allowed, where = parent_of(path), "the directory it was found in"
    if allowed is not None and not is_subpath(real_paths.real(allowed), real):
        return f"refused: a symlink leads outside {where}"
    if is_live_state(real):
        return f"refused: it resolves to {real}, live system state, not a file"
    return None


def discover(
    cwd: str,
    filenames: Sequence[str],
    *,
    home: str,
    global_dir: str,
    trusted: bool = True,
    import_format: str = "tree",
    extra_paths: Sequence[str] = (),
    ancestry: GitAncestry | None = None,
) -> Discovery:
    """Find, read and import-expand every context file for ``cwd``. Never raises for bad files.

    ``ancestry`` is the pass's walk to ``.git``, if the caller has walked it already.
    """
    cwd = lexical_abspath(cwd)
    global_dir = lexical_abspath(global_dir)
    extra_paths = [lexical_abspath(p) for p in extra_paths]  # every listed path is then normalised, as imports expect
    trace = ImportTrace(ancestry=ancestry or GitAncestry())
    shown: dict[str, str] = {}
    listed, found, root, scanned = _listed(
        cwd, filenames, lexical_abspath(home), global_dir, trusted, extra_paths, trace.ancestry, trace.real_paths, trace.problems, shown
    )
    project = root or cwd
    project_prefix = project if project.endswith(os.sep) else project + os.sep
    global_prefix = global_dir if global_dir.endswith(os.sep) else global_dir + os.sep
    files: list[ContextFile] = []
    for path in _dedupe_by_realpath(listed, found):
        trace.dependencies.add(path)
        data = found[path]
        refusal = _refusal(path, project_prefix, global_prefix, extra_paths, trace.real_paths)
        if refusal is not None:
            data = OSError(errno.EPERM, refusal)
        if isinstance(data, OSError):
            message = f"could not read context file: {data.strerror or data}"
            log.warning("%s: %s", path, message)
            trace.problems.append(Problem(path, message))
            files.append(ContextFile(path, _display(path, cwd, shown), None))
            continue
        raw = decode_text(data, path, trace.problems)
        content = expand_file(raw, path, import_format, MAX_IMPORT_DEPTH, trace)
        files.append(ContextFile(path, _display(path, cwd, shown), content))
    return Discovery(files, root, scanned, trace.dependencies, trace.problems)
