"""What all read-only tools share: declarations, argument errors, workspace confinement."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from qwen_lsp.agent.tool import ToolContext
from qwen_lsp.agent.tools import read_only_tools


def test_fixed_order_and_qwen_code_names() -> None:
    assert [t.name for t in read_only_tools()] == ["read_file", "list_directory", "glob", "grep_search"]


def test_declarations_are_stable_and_mutation_safe() -> None:
    first = [json.dumps(t.declaration(), sort_keys=False) for t in read_only_tools()]
    for tool in read_only_tools():
        decl = tool.declaration()
        decl["function"]["parameters"]["properties"].clear()  # a careless caller
        assert decl["type"] == "function" and decl["function"]["name"] == tool.name
    assert [json.dumps(t.declaration(), sort_keys=False) for t in read_only_tools()] == first


@pytest.mark.parametrize(
    ("tool_name", "params", "required"),
    [
        ("read_file", {"file_path", "offset", "limit"}, ["file_path"]),
        ("list_directory", {"path", "ignore"}, ["path"]),
        ("glob", {"pattern", "path"}, ["pattern"]),
        ("grep_search", {"pattern", "glob", "path", "limit"}, ["pattern"]),
    ],
)
def test_parameter_names_match_qwen_code(tool_name: str, params: set[str], required: list[str]) -> None:
    [tool] = [t for t in read_only_tools() if t.name == tool_name]
    schema = tool.declaration()["function"]["parameters"]
    assert set(schema["properties"]) == params
    assert schema["required"] == required


def make_ctx(root: Path, seen: list[Path] | None = None) -> ToolContext:
    return ToolContext(workspace_root=root, cwd=root, touched=(seen.append if seen is not None else lambda _p: None))


@pytest.mark.parametrize(
    ("tool_name", "args"),
    [
        ("read_file", {}),
        ("read_file", {"file_path": 12}),
        ("read_file", {"file_path": "/x", "offset": -1}),
        ("read_file", {"file_path": "/x", "limit": 0}),
        ("list_directory", {"path": None}),
        ("list_directory", {"path": "/x", "ignore": "*.log"}),
        ("glob", {"pattern": "   "}),
        ("grep_search", {"pattern": "("}),
        ("grep_search", {"pattern": "x", "limit": 0}),
    ],
)
async def test_bad_arguments_are_error_results_not_exceptions(tmp_path: Path, tool_name: str, args: dict) -> None:
    [tool] = [t for t in read_only_tools() if t.name == tool_name]
    result = await tool.run(args, make_ctx(tmp_path))
    assert result.is_error
    assert result.output.startswith(f"Invalid arguments for {tool_name}:")
    assert "Value error," not in result.output


async def test_unknown_extra_arguments_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    [read] = [t for t in read_only_tools() if t.name == "read_file"]
    result = await read.run({"file_path": str(tmp_path / "a.txt"), "pages": None}, make_ctx(tmp_path))
    assert not result.is_error and result.output == "a"


@pytest.mark.parametrize(
    ("tool_name", "key"),
    [("read_file", "file_path"), ("list_directory", "path"), ("glob", "path"), ("grep_search", "path")],
)
async def test_paths_outside_the_workspace_are_refused(tmp_path: Path, tool_name: str, key: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("s3cret\n")
    (root / "link").symlink_to(outside)
    [tool] = [t for t in read_only_tools() if t.name == tool_name]
    seen: list[Path] = []
    target = outside / "key.txt" if tool_name == "read_file" else outside
    extra = {"glob": {"pattern": "*"}, "grep_search": {"pattern": "s3cret"}}.get(tool_name, {})
    for raw in (str(target), str(root / ".." / target.relative_to(tmp_path)), str(root / "link" / target.name) if tool_name == "read_file" else str(root / "link")):
        result = await tool.run({key: raw, **extra}, make_ctx(root, seen))
        assert result.is_error, raw
        assert "outside the workspace" in result.output
        assert "s3cret" not in result.output
    assert seen == []


async def test_relative_paths_resolve_against_cwd(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.txt").write_text("hello\n")
    [read] = [t for t in read_only_tools() if t.name == "read_file"]
    ctx = ToolContext(workspace_root=tmp_path, cwd=tmp_path / "sub")
    result = await read.run({"file_path": "f.txt"}, ctx)
    assert result.output == "hello"


async def test_unreadable_file_is_an_error_result(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        target = tmp_path / "fifo-dir"
        target.mkdir()
        path = target
        expect = "directory"
    else:
        path = tmp_path / "locked.txt"
        path.write_text("x")
        path.chmod(0)
        expect = "Error in read_file"
    [read] = [t for t in read_only_tools() if t.name == "read_file"]
    result = await read.run({"file_path": str(path)}, make_ctx(tmp_path))
    assert result.is_error and expect in result.output
