"""Where a path really leads: containment checks that follow symlinks.

Qwen Code decides whether an ``@import`` stays inside the project with
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

from .text import is_subpath


class RealPaths:
    """One context build's memo of resolved paths: each directory is looked at once per build.

    ``os.path.realpath`` costs an ``lstat`` per component of the whole path,
    every time; on a deep checkout, asked once per import and per context
    file, that tripled the time of a cold context build. Here each
    component is ``lstat``-ed once per build, and only a symlink costs more.
    """

    def __init__(self) -> None:
        self._resolved: dict[str, str] = {}  # lexical path -> the same with symlinks resolved

    def inside(self, path: str, root: str) -> str | None:
        """``path`` with every symlink resolved, or ``None`` when that leaves ``root`` (resolved too).

        Both are absolute and normalised. A missing path is resolved as far
        as it exists (``realpath``'s non-strict mode), so a link that
        dangles to the outside is refused as well.
        """
        real = self.real(path)
        return real if is_subpath(self.real(root), real) else None

    def real(self, path: str) -> str:
        """``os.path.realpath(path)`` for an absolute, normalised path, from the memo where it can."""
        names: list[str] = []
        known = path
        while known not in self._resolved:
            parent, name = os.path.split(known)
            if parent == known:  # the filesystem root
                self._resolved[known] = known
                break
            names.append(name)
            known = parent
        lexical, real = known, self._resolved[known]
        while names:
            name = names.pop()
            lexical, candidate = os.path.join(lexical, name), os.path.join(real, name)
            try:
                mode = os.lstat(candidate).st_mode
            except OSError:  # missing or unreadable: what follows is taken as written, as realpath does
                return os.path.join(candidate, *reversed(names))
            real = os.path.realpath(candidate) if stat.S_ISLNK(mode) else candidate
            self._resolved[lexical] = real
        return real
