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

from .text import is_subpath


class RealPaths:
    """One context build's memo of resolved roots (a root is asked about once per import)."""

    def __init__(self) -> None:
        self._roots: dict[str, str] = {}

    def inside(self, path: str, root: str) -> str | None:
        """``path`` with every symlink resolved, or ``None`` when that leaves ``root`` (resolved too).

        A missing path is resolved as far as it exists (``realpath``'s
        non-strict mode), so a link that dangles to the outside is refused
        as well.
        """
        real_root = self._roots.get(root)
        if real_root is None:
            real_root = self._roots[root] = os.path.realpath(root)
        real = os.path.realpath(path)
        return real if is_subpath(real_root, real) else None
