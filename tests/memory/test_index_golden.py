"""``MEMORY.md`` byte-identical to what the Qwen Code 0.24.4 CLI writes for the same memories.

The golden files were written by the real CLI (``tests/support/cli_index_golden.py`` says how:
its extraction run rebuilt the project index, its startup the team index); here our store
lays out the same files and rebuilds, and the bytes must match — whichever tool wrote last,
the file does not change.
"""

from __future__ import annotations

import os
from pathlib import Path

from support.cli_index_golden import BASE_MTIME, EXTRACTED, GOLDEN, PROJECT_DOCS, TEAM_DOCS, lay_out
from support.rules_repo import git

from qwen_lsp.memory.store import MemoryStore


def test_project_and_team_indexes_match_the_cli_byte_for_byte(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    store = MemoryStore(repo, home=tmp_path / "home", env={})
    project = store.root("project")
    lay_out(project, PROJECT_DOCS, mtimes=True)
    newest = BASE_MTIME + len(PROJECT_DOCS) + 100
    lay_out(project, [EXTRACTED], mtimes=False)
    os.utime(project / EXTRACTED[0], (newest, newest))
    lay_out(store.root("team"), TEAM_DOCS, mtimes=False)

    assert store.rebuild_index("project") and store.rebuild_index("team")
    assert (project / "MEMORY.md").read_bytes() == (GOLDEN / "project_MEMORY.md").read_bytes()
    assert (store.root("team") / "MEMORY.md").read_bytes() == (GOLDEN / "team_MEMORY.md").read_bytes()
    # The CLI's bytes are already ours: a rebuild over them writes nothing.
    assert not store.rebuild_index("project") and not store.rebuild_index("team")


def test_the_golden_lines_are_cut_where_the_cli_cuts_them() -> None:
    """Guards the goldens themselves: non-ASCII link targets percent-encoded, whole lines cut at 150 units."""
    text = (GOLDEN / "project_MEMORY.md").read_text("utf-8")
    assert "(feedback/d%C3%A9ploiement-rapide.md)" in text and "déploiement-rapide.md" not in text
    long_line = next(line for line in text.splitlines() if line.startswith("- [Très long]"))
    assert len(long_line) == 150 and long_line.endswith("tr%C3\u2026")  # cut inside the link target
