"""glob: matching rules, ordering, ignore rules, caps, touched paths."""

from __future__ import annotations

import os
import time
from pathlib import Path

from qwen_lsp.agent.tool import ToolContext, ToolResult
from qwen_lsp.agent.tools.glob import MAX_SHOWN, GlobTool, order_newest_first


async def glob(root: Path, seen: list[Path] | None = None, **args) -> ToolResult:
    ctx = ToolContext(workspace_root=root, cwd=root, touched=(seen.append if seen is not None else lambda _p: None))
    return await GlobTool().run(args, ctx)


def paths_in(result: ToolResult) -> list[str]:
    return result.output.split("---\n", 1)[1].split("\n---\n")[0].splitlines()


def tree(root: Path, files: dict[str, float]) -> None:
    """Create files with given ages in hours."""
    now = time.time()
    for rel, age_hours in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel)
        mtime = now - age_hours * 3600
        os.utime(path, (mtime, mtime))


async def test_recent_files_newest_first_then_older_alphabetically(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    tree(root, {"src/old_b.py": 100, "src/old_a.py": 200, "src/new.py": 1, "src/newer.py": 0.5, "README.md": 0.1})
    seen: list[Path] = []
    result = await glob(root, seen, pattern="**/*.py")
    assert result.output.startswith('Found 4 file(s) matching "**/*.py" in the workspace directory, sorted by modification time (newest first):')
    assert paths_in(result) == [str(root / p) for p in ("src/newer.py", "src/new.py", "src/old_a.py", "src/old_b.py")]
    assert seen == [root / p for p in ("src/newer.py", "src/new.py", "src/old_a.py", "src/old_b.py")]


async def test_pattern_semantics_case_dotfiles_braces_and_top_level(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    tree(root, {"A.PY": 50, "b.py": 50, "sub/c.py": 50, ".hidden.py": 50, "x.ts": 50, "x.tsx": 50})
    top = await glob(root, pattern="*.py")
    assert paths_in(top) == [str(root / ".hidden.py"), str(root / "A.PY"), str(root / "b.py")]
    braces = await glob(root, pattern="*.{ts,tsx}")
    assert len(paths_in(braces)) == 2


async def test_ignored_directories_are_skipped(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    tree(root, {"a.js": 50, "node_modules/lib/x.js": 50, ".git/hooks/h.js": 50, "dist/out.js": 50, "src/dist/keep.js": 50})
    (root / ".gitignore").write_text("/dist\n")
    result = await glob(root, pattern="**/*.js")
    assert paths_in(result) == [str(root / "a.js"), str(root / "src/dist/keep.js")]


async def test_path_parameter_and_absolute_pattern(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    tree(root, {"src/a.py": 50, "tests/t.py": 50})
    seen: list[Path] = []
    scoped = await glob(root, seen, pattern="*.py", path=str(root / "tests"))
    assert paths_in(scoped) == [str(root / "tests/t.py")]
    assert f"within {root / 'tests'}" in scoped.output
    assert seen[0] == root / "tests"
    absolute = await glob(root, pattern=str(root / "src" / "*.py"))
    assert paths_in(absolute) == [str(root / "src/a.py")]


async def test_literal_file_name_with_glob_characters(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    tree(root, {"[id].tsx": 50, "i.tsx": 50})
    result = await glob(root, pattern="[id].tsx")
    assert paths_in(result) == [str(root / "[id].tsx")]


async def test_no_match_and_cap(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    none = await glob(root, pattern="*.rs")
    assert not none.is_error and none.output.startswith('No files found matching pattern "*.rs"')
    tree(root, {f"f{i:03}.txt": 50 for i in range(MAX_SHOWN + 3)})
    many = await glob(root, pattern="*.txt")
    assert len(paths_in(many)) == MAX_SHOWN
    assert many.output.endswith("[3 files truncated] ...")


def test_order_helper_puts_recent_before_old() -> None:
    now = 1_000_000.0
    found = [(Path("/b"), now - 10), (Path("/a"), now - 90_000), (Path("/c"), now - 5)]
    assert order_newest_first(found, now) == [Path("/c"), Path("/b"), Path("/a")]
