"""Is a path inside a root? The package's one home for containment checks.

Lexical (:func:`is_subpath` on normalised strings, as Qwen Code's
``isSubpath``; :func:`is_within` on ``path.relative``, as its memory paths),
and resolved (:func:`resolved_inside`, :class:`RealPaths`): a path the
repository or the model names is checked again after its symlinks are
followed, so a link out of the project cannot pass.

Why resolved checks: Qwen Code decides whether an ``@import`` stays inside the project with
``path.resolve``, which never follows links, so ``@./pw.md`` with
``pw.md -> /etc/passwd`` (or a linked directory, or ``/proc/self/environ``)
passes its check and the outside file lands in the system prompt. The
repository is untrusted input, so every file read on its say-so is checked
again after resolving symlinks, against the same allowed root, also
resolved: a project that itself lives under a symlinked directory, or a
link that stays inside the project, keeps working.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def is_subpath(parent: str, child: str) -> bool:
    """Qwen Code's ``isSubpath`` for normalised absolute paths: lexical, ``parent`` itself counts."""
    if child == parent:
        return True
    prefix = parent if parent.endswith(os.sep) else parent + os.sep
    return child.startswith(prefix)


def is_within(root: Path, path: Path) -> bool:
    """``path.relative``-based containment: ``path`` is ``root`` or below it, compared lexically."""
    rel = os.path.relpath(os.path.normpath(os.path.abspath(path)), os.path.normpath(os.path.abspath(root)))
    return rel == os.curdir or not (rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel))


def resolved_inside(path: Path, root: Path) -> Path | None:
    """``path`` with symlinks resolved, or None when that lands outside ``root`` (itself already resolved).

    The one containment check for tools: ``read_file`` uses it on the
    model's path, and the grep/glob walks on every symlinked file they
    meet, so a link to ``/etc/passwd`` cannot leak through either.
    """
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: nothing readable behind it
        return None
    if resolved != root and not resolved.is_relative_to(root):
        return None
    return resolved


LIVE_STATE = ("/proc", "/sys")
"""Pseudo-filesystems: a "file" there is the system's live state (``/proc/self/environ`` holds the server's API key).

``/dev`` is not listed: its devices are not regular files, which ``read_bytes`` refuses anyway, and
``/dev/shm`` is an ordinary place for a scratch checkout."""


_LIVE_PREFIXES = tuple(top + os.sep for top in LIVE_STATE)
POSIX = os.sep == "/" and os.altsep is None
"""Paths have one separator, ``/``: the string shortcuts below (and the callers' own) give ``os.path``'s answers."""


def split_path(path: str) -> tuple[str, str]:
    """``os.path.split`` of a normalised absolute path, in one C call where that gives the same answer.

    A cold context build splits every directory it walks and every file it
    imports; the general function costs about a microsecond a call.
    """
    parent, _, name = path.rpartition("/")
    if POSIX and parent and parent != "/":  # at the top, "//" and "/" need the general rules
        return parent, name
    return os.path.split(path)


def parent_of(path: str) -> str:
    """``os.path.dirname`` of a normalised absolute path (see :func:`split_path`)."""
    return split_path(path)[0]


def ancestors(path: str) -> list[str]:
    """A normalised absolute ``path``, then each directory above it, the filesystem root last.

    One call for a walk up a deep checkout, where :func:`parent_of` per
    level costs two Python calls each (a cold context build walks up twice).
    """
    out = [path]
    if POSIX and not path.startswith("//"):  # POSIX keeps a leading "//" as its own root: the general rules
        cut = path.rfind("/")
        while cut > 0:
            path = path[:cut]
            out.append(path)
            cut = path.rfind("/")
        if path != "/":
            out.append("/")
        return out
    parent = os.path.dirname(path)
    while parent != out[-1]:
        out.append(parent)
        parent = os.path.dirname(parent)
    return out


def child_of(directory: str, name: str) -> str:
    """``os.path.join(directory, name)`` for a normalised absolute directory and a relative ``name``."""
    if POSIX:
        return directory + name if directory.endswith("/") else f"{directory}/{name}"
    return os.path.join(directory, name)


def is_live_state(real: str) -> bool:
    """Whether a resolved path lies in ``/proc`` or ``/sys``: never context, whatever the root allows.

    :func:`is_subpath` against each, in one C call: a cold context build asks for every file it reads.
    """
    return real.startswith(_LIVE_PREFIXES) or real in LIVE_STATE


class RealPaths:
    """One context build's memo of resolved paths: each directory is looked at once per build.

    ``os.path.realpath`` costs an ``lstat`` per component of the whole path,
    every time; on a deep checkout, asked once per import and per context
    file, that tripled the time of a cold context build. Here each
    component is looked at once per build (a directory by an ``O_PATH`` probe on Linux, else
    ``lstat``; the working directory's whole spine by :meth:`prime`), and only a symlink costs more.
    """

    def __init__(self) -> None:
        self._resolved: dict[str, str] = {}  # lexical path -> the same with symlinks resolved
        self._dirs_inside: dict[str, dict[str, str]] = {}  # root -> directory -> its real path and a separator, or ""

    def inside(self, path: str, root: str) -> str | None:
        """``path`` with every symlink resolved, or ``None`` when that leaves ``root`` (resolved too).

        Both are absolute and normalised. A missing path is resolved as far
        as it exists (``realpath``'s non-strict mode), so a link that
        dangles to the outside is refused as well.
        """
        real = self.real(path)
        return real if is_subpath(self.real(root), real) else None

    def parent_inside(self, path: str, root: str) -> str | None:
        """``path`` with its directories resolved (not its last component), or ``None`` when they leave ``root``.

        For a caller that then opens the file with ``O_NOFOLLOW``: only when
        that fails with ELOOP (the file itself is a link) does it need
        :meth:`inside`, so an ordinary file costs no ``lstat`` of its own.
        An import loop asks about the same few directories over and over, so
        each directory's answer for ``root`` is kept: after the first import
        from a directory, the answer is a dict lookup and a concatenation.
        """
        parent, name = split_path(path)
        answers = self.dirs_inside(root)
        real_parent = answers.get(parent)
        if real_parent is None:
            real = self.real(parent)
            inside = is_subpath(self.real(root), real)
            real_parent = answers[parent] = (real if real.endswith(os.sep) else real + os.sep) if inside else ""
        if real_parent:
            return real_parent + name
        candidate = child_of(self.real(parent), name)  # the root itself, named from above it ("@.", "@../proj")
        return candidate if is_subpath(self.real(root), candidate) else None

    def dirs_inside(self, root: str) -> dict[str, str]:
        """:meth:`parent_inside`'s memo for ``root``: directory -> its real path and a separator, or "" (refused).

        For a hot loop that asks about the same few directories many times:
        a hit there is a dict lookup; a miss (or "") goes to :meth:`parent_inside`.
        """
        answers = self._dirs_inside.get(root)
        if answers is None:
            answers = self._dirs_inside[root] = {}
        return answers

    def not_a_link(self, path: str) -> None:
        """Note that ``path`` was just opened with ``O_NOFOLLOW``: its real path is its directory's plus its name.

        A context file opened that way needs no ``lstat`` of its own when its
        containment is checked; the directories above it are resolved as usual.
        """
        if path not in self._resolved:
            parent, name = split_path(path)
            if name:
                self._resolved[path] = child_of(self.real(parent), name)

    def real(self, path: str) -> str:
        """``os.path.realpath(path)`` for an absolute, normalised path, from the memo where it can.

        A hit is one dict lookup; a miss resolves the parent (usually a hit)
        and looks at only the last component. Recursion depth is the path's
        depth. Missing components are not memoised: they may appear later.
        """
        hit = self._resolved.get(path)
        if hit is not None:
            return hit
        parent, name = split_path(path)
        if parent == path:  # the filesystem root
            self._resolved[path] = path
            return path
        candidate = child_of(self.real(parent), name)
        try:
            mode = os.lstat(candidate).st_mode
        except OSError:  # missing or unreadable: taken as written, as realpath does
            return candidate
        real = os.path.realpath(candidate) if stat.S_ISLNK(mode) else candidate
        self._resolved[path] = real
        return real
