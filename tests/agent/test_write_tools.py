"""write_file, edit and the read-only run_shell_command, run directly (the permission layer is tested in test_fork)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qwen_lsp.agent.tool import ToolContext
from qwen_lsp.agent.tools.edit import EditTool
from qwen_lsp.agent.tools.read_file import ReadFileTool
from qwen_lsp.agent.tools.shell import ReadOnlyShellTool
from qwen_lsp.shell.analysis import analyse
from qwen_lsp.shell.run import OUTPUT_THRESHOLD, TRUNCATED_MARKER
from qwen_lsp.agent.tools.write_file import WriteFileTool
from qwen_lsp.memory.paths import realpath_nearest_existing


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.txt").write_text("alpha\nbeta\nalpha\n")
    return ToolContext(workspace_root=ws, cwd=ws, read_roots=(tmp_path / "mem",))


async def test_write_file_creates_then_overwrites_through_its_writer(ctx: ToolContext, tmp_path: Path) -> None:
    seen: list[Path] = []

    def writer(path: Path, text: str) -> None:
        seen.append(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    target = tmp_path / "mem" / "user" / "me.md"
    created = await WriteFileTool(writer).run({"file_path": str(target), "content": "one"}, ctx)
    assert created.output == f"Successfully created and wrote to new file: {target}." and created.extra["written"] == str(target)
    again = await WriteFileTool().run({"file_path": str(target), "content": "two"}, ctx)
    assert again.output.startswith("Successfully overwrote file") and target.read_text() == "two" and seen == [target]
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".tmp")]
    relative = await WriteFileTool().run({"file_path": "rel.md", "content": "x"}, ctx)
    assert relative.is_error and "must be absolute" in relative.output


async def test_edit_replaces_exactly_once_unless_asked_for_all(ctx: ToolContext) -> None:
    path = str(ctx.workspace_root / "src" / "a.txt")
    twice = await EditTool().run({"file_path": path, "old_string": "alpha", "new_string": "gamma"}, ctx)
    assert twice.is_error and "expected 1 occurrence but found 2" in twice.output
    every = await EditTool().run({"file_path": path, "old_string": "alpha", "new_string": "gamma", "replace_all": True}, ctx)
    assert every.output.endswith("(2 replacements).") and Path(path).read_text() == "gamma\nbeta\ngamma\n"
    missing = await EditTool().run({"file_path": path, "old_string": "zeta", "new_string": "x"}, ctx)
    assert missing.is_error and "could not find the string" in missing.output
    new = ctx.workspace_root / "new.md"
    assert not (await EditTool().run({"file_path": str(new), "old_string": "", "new_string": "born"}, ctx)).is_error
    assert new.read_text() == "born"
    exists = await EditTool().run({"file_path": str(new), "old_string": "", "new_string": "again"}, ctx)
    assert exists.is_error and "already exists" in exists.output


@pytest.mark.parametrize(
    "command",
    [
        "cat a > b", "ls; rm x", "ls && rm x", "ls || rm x", "ls & rm x", "cat $HOME/x", "cat `id`", "ls $(id)",
        "find . -delete", "find . -exec rm {} ;", "find . -fprint out", "sort -o out in", "sort -uo out in", "sort --output=out in",
        "rg --pre cat x", "uniq in out", "tail -f log", "/bin/ls", "ls\nrm x", "( ls )", "ls | rm x", "ls |", "",
    ],
)
async def test_commands_that_could_change_anything_are_refused(command: str, ctx: ToolContext) -> None:
    assert not analyse(command, ctx.workspace_root, [ctx.workspace_root]).read_only
    result = await ReadOnlyShellTool().run({"command": command}, ctx)
    assert result.is_error and (result.output.startswith("Command refused") or "at least 1 character" in result.output)


def test_read_only_pipelines_are_read_only(ctx: ToolContext) -> None:
    assert analyse('grep -rn "a|b" src | sort | uniq -c | head -5', ctx.workspace_root, [ctx.workspace_root]).read_only


async def test_the_shell_runs_a_pipeline_in_the_workspace(ctx: ToolContext) -> None:
    result = await ReadOnlyShellTool().run({"command": "grep -rn alpha src | wc -l"}, ctx)
    assert not result.is_error and "Output: 2\n" in result.output and "Exit Code: 0" in result.output


async def test_the_shell_refuses_paths_outside_its_roots_and_bounds_output(ctx: ToolContext, tmp_path: Path) -> None:
    outside = await ReadOnlyShellTool().run({"command": f"cat {tmp_path / 'secret'}"}, ctx)
    assert outside.is_error and "outside the workspace" in outside.output
    climb = await ReadOnlyShellTool().run({"command": "cat ../../etc/passwd"}, ctx)
    assert climb.is_error
    (tmp_path / "mem").mkdir()
    (tmp_path / "mem" / "MEMORY.md").write_text("index\n")
    inside_memory = await ReadOnlyShellTool().run({"command": f"cat {tmp_path / 'mem' / 'MEMORY.md'}"}, ctx)
    assert "Output: index\n" in inside_memory.output
    (ctx.workspace_root / "big.txt").write_text("y" * (OUTPUT_THRESHOLD * 4))
    big = await ReadOnlyShellTool().run({"command": "cat big.txt"}, ctx)
    assert TRUNCATED_MARKER in big.output and len(big.output) <= OUTPUT_THRESHOLD


def test_a_dangling_link_is_judged_by_where_it_points(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    os.symlink(tmp_path / "elsewhere" / "x.md", root / "decoy.md")
    assert realpath_nearest_existing(root / "decoy.md") == (tmp_path / "elsewhere" / "x.md").resolve()
    assert realpath_nearest_existing(root / "a" / "b.md") == root.resolve() / "a" / "b.md"


async def test_read_tools_open_the_read_roots_and_nothing_else(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "mem" / "user").mkdir(parents=True)
    (tmp_path / "mem" / "user" / "me.md").write_text("tabs\n")
    (tmp_path / "other.md").write_text("secret\n")
    assert (await ReadFileTool().run({"file_path": str(tmp_path / "mem" / "user" / "me.md")}, ctx)).output == "tabs"
    assert (await ReadFileTool().run({"file_path": str(tmp_path / "other.md")}, ctx)).is_error
    without = ToolContext(workspace_root=ctx.workspace_root, cwd=ctx.cwd)
    assert (await ReadFileTool().run({"file_path": str(tmp_path / "mem" / "user" / "me.md")}, without)).is_error
