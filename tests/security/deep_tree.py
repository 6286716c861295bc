"""Directories nested deeper than Python's recursion limit, made and removed without recursion.

``os.makedirs`` and ``shutil.rmtree`` (which pytest uses to clean old temp
directories) recurse once per level, so a test that leaves such a tree
behind would break later pytest runs on the machine: every test using one
removes it before it ends.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


def remove_deep(top: Path) -> None:
    """Remove ``top`` and everything below it, deepest first, on an explicit stack."""
    stack: list[tuple[str, bool]] = [(str(top), False)]
    while stack:
        path, emptied = stack.pop()
        with contextlib.suppress(FileNotFoundError):
            if emptied:
                os.rmdir(path)
                continue
            stack.append((path, True))
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, False))
                    else:
                        os.unlink(entry.path)


@contextlib.contextmanager
def deep_tree(base: Path, levels: int = 1100) -> Iterator[Path]:
    """``base/d/d/…/d`` (``levels`` deep), yielded as its deepest directory; removed afterwards."""
    base.mkdir(parents=True, exist_ok=True)
    deep = base
    try:
        for _ in range(levels):
            deep = deep / "d"
            deep.mkdir()
        yield deep
    finally:
        remove_deep(base / "d")
