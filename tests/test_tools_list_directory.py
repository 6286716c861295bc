"""list_directory: order, markers, ignore rules, caps."""

from __future__ import annotations

from pathlib import Path

from qwen_lsp.agent.tool import ToolContext, ToolResult
from qwen_lsp.agent.tools.list_directory import MAX_ENTRIES, ListDirectoryTool


async def ls(root: Path, seen: list[Path] | None = None, **args) -> ToolResult:
    ctx = ToolContext(workspace_root=root, cwd=root, touched=(seen.append if seen is not None else lambda _p: None))
    return await ListDirectoryTool().run(args, ctx)


async def test_directories_first_then_files_by_name(tmp_path: Path) -> None:
    for name in ("b.txt", "A.md", "c.py"):
        (tmp_path / name).write_text("x")
    for name in ("zeta", "Alpha"):
        (tmp_path / name).mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "node_modules").mkdir()
    seen: list[Path] = []
    result = await ls(tmp_path, seen, path=str(tmp_path))
    assert result.output == (
        f"Listed 5 item(s) in {tmp_path.resolve()}:\n---\n"
        "[DIR] Alpha\n[DIR] zeta\nA.md\nb.txt\nc.py\n\n(2 ignored by .gitignore rules)"
    )
    assert seen == [tmp_path.resolve()]


async def test_ignore_parameter_and_gitignore(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("# comment\n*.log\nbuild/\n!keep.log\n")
    for name in ("app.log", "keep.log", "main.py", "notes.txt"):
        (tmp_path / name).write_text("x")
    (tmp_path / "build").mkdir()
    result = await ls(tmp_path, path=str(tmp_path), ignore=["*.txt"])
    listed = result.output.split("---\n", 1)[1].split("\n\n")[0].splitlines()
    assert listed == [".gitignore", "main.py"]
    assert "(3 ignored by .gitignore rules)" in result.output  # negations are not supported


async def test_many_entries_are_capped(tmp_path: Path) -> None:
    for i in range(MAX_ENTRIES + 7):
        (tmp_path / f"f{i:03}.txt").write_text("")
    result = await ls(tmp_path, path=str(tmp_path))
    assert result.output.startswith(f"Listed {MAX_ENTRIES + 7} item(s)")
    assert result.output.endswith("[7 items truncated] ...")
    assert "f099.txt" in result.output and "f100.txt" not in result.output


async def test_empty_missing_and_file_paths(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    empty = await ls(tmp_path, path=str(tmp_path / "empty"))
    assert not empty.is_error and "is empty" in empty.output
    missing = await ls(tmp_path, path=str(tmp_path / "nope"))
    assert missing.is_error and "not found" in missing.output
    (tmp_path / "f.txt").write_text("x")
    not_dir = await ls(tmp_path, path=str(tmp_path / "f.txt"))
    assert not_dir.is_error and "not a directory" in not_dir.output


async def test_names_sort_as_javascripts_locale_compare(tmp_path: Path) -> None:
    """Qwen Code sorts with ``localeCompare``: punctuation before letters, accents beside their base letter."""
    for name in ("load.rs", "load_batch.rs", "éclair.md", "zebra.md", "eagle.md", "_private.py"):
        (tmp_path / name).write_text("x")
    result = await ls(tmp_path, path=str(tmp_path))
    listed = result.output.split("---\n", 1)[1].splitlines()
    assert listed == ["_private.py", "eagle.md", "éclair.md", "load_batch.rs", "load.rs", "zebra.md"]
