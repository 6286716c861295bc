"""Regressions found by the path properties (``test_properties_paths.py``).

A dangling symlink in the *middle* of a path: ``realpath_nearest_existing``
walked up to the nearest ancestor that ``os.path.exists`` (false for a
dangling link), so ``root/link/x.md`` with ``link`` → ``/outside/new``
counted as inside the root, and a memory fork's permission rule allowed a
``write_file`` there (the write itself then failed with ``ENOENT``, since
the link's target does not exist; it is refused up front now). The store
already refused it, as it resolves the parent, where the link is the leaf.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qwen_lsp.features.memory.permissions import memory_rule
from qwen_lsp.agent.permissions import Decision
from qwen_lsp.memory.errors import OutsideMemoryRoot
from qwen_lsp.memory.paths import realpath_nearest_existing
from qwen_lsp.memory.store import MemoryStore

MEMORY = "---\nname: n\ndescription: d\ntype: user\n---\nbody\n"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[MemoryStore, Path, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    store = MemoryStore(repo, home=tmp_path / "home", env={"QWEN_CODE_MEMORY_LOCAL": "1"})
    root = store.root("project")
    root.mkdir(parents=True)
    os.symlink(outside / "new", root / "dangling")
    return store, root, outside


def test_a_dangling_link_in_the_middle_is_resolved_to_its_target(layout: tuple[MemoryStore, Path, Path]) -> None:
    _store, root, outside = layout
    assert realpath_nearest_existing(root / "dangling" / "x.md") == outside.resolve() / "new" / "x.md"


def test_the_store_refuses_a_write_through_a_dangling_middle_link(layout: tuple[MemoryStore, Path, Path]) -> None:
    store, root, outside = layout
    with pytest.raises(OutsideMemoryRoot, match="leads out of the project memory directory through a symlink"):
        store.write_text(root / "dangling" / "x.md", MEMORY)
    assert list(outside.iterdir()) == []


def test_the_fork_rule_denies_a_write_through_a_dangling_middle_link(layout: tuple[MemoryStore, Path, Path]) -> None:
    _store, root, _outside = layout
    rule = memory_rule([root])
    verdict = rule("write_file", {"file_path": str(root / "dangling" / "x.md"), "content": "x"})
    assert verdict.decision == Decision.DENY
    assert rule("write_file", {"file_path": str(root / "ok.md"), "content": "x"}).decision == Decision.ALLOW
