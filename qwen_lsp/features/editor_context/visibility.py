"""Which open files the model may be told about: inside the workspace and not excluded by the project.

A file the editor has open may live anywhere (``~/.ssh/config``, another project, a
link out of the workspace). Naming it, or quoting its selection, would hand the model
what its own tools are not allowed to read, so the same rules apply: the path, with
links resolved, lies inside the workspace, and neither it nor a folder above it is
skipped by ``.gitignore``/``.qwenignore`` (the search tools' :class:`IgnoreRules`).
The rules are re-read when either ignore file changes (one ``stat`` each per check).
"""

from __future__ import annotations

import os
from pathlib import Path

from ...agent.tools.ignore import IGNORE_FILES, IgnoreRules
from ...files.containment import resolved_inside


class EditorFileFilter:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._rules: IgnoreRules | None = None
        self._stamp: tuple[tuple[int, int] | None, ...] = ()

    def _current_rules(self) -> IgnoreRules:
        stamp = tuple(_stamp(self.root / name) for name in IGNORE_FILES)
        if self._rules is None or stamp != self._stamp:
            self._rules, self._stamp = IgnoreRules.for_workspace(self.root), stamp
        return self._rules

    def __call__(self, path: Path) -> bool:
        resolved = resolved_inside(path, self.root)
        if resolved is None:
            return False
        rules = self._current_rules()
        here = resolved
        is_dir = False
        while here != self.root:
            if rules.ignored(here, is_dir=is_dir):
                return False
            here, is_dir = here.parent, True
        return True


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)
