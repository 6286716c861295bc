"""read_file: paging, caps, binary files, bad bytes, touched paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from qwen_lsp.agent.tool import ToolContext, ToolResult
from qwen_lsp.agent.tools.read_file import ReadFileTool
from qwen_lsp.files.text import DEFAULT_LINE_LIMIT, MAX_OUTPUT_CHARS


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path


async def read(root: Path, seen: list[Path] | None = None, **args) -> ToolResult:
    ctx = ToolContext(workspace_root=root, cwd=root, touched=(seen.append if seen is not None else lambda _p: None))
    return await ReadFileTool().run(args, ctx)


async def test_small_file_is_returned_whole_and_touched(root: Path) -> None:
    path = root / "a.py"
    path.write_text("line 1\nline 2  \r\nline 3\n")
    seen: list[Path] = []
    result = await read(root, seen, file_path=str(path))
    assert not result.is_error
    assert result.output == "line 1\nline 2  \nline 3"
    assert seen == [path.resolve()]
    assert result.extra["total_lines"] == 3 and result.extra["truncated"] is False


async def test_offset_and_limit_page_through_a_file(root: Path) -> None:
    path = root / "n.txt"
    path.write_text("".join(f"row {i}\n" for i in range(50)))
    result = await read(root, file_path=str(path), offset=10, limit=5)
    header, body = result.output.split("\n\n---\n\n")
    assert header == "Showing lines 11-15 of 50 total lines. To read more, call read_file again with offset: 15."
    assert body.splitlines() == [f"row {i}" for i in range(10, 15)]
    last = await read(root, file_path=str(path), offset=45)
    assert last.output.startswith("Showing lines 46-50 of 50 total lines.\n")


async def test_default_line_limit(root: Path) -> None:
    path = root / "big.txt"
    path.write_text("".join(f"{i}\n" for i in range(DEFAULT_LINE_LIMIT + 200)))
    result = await read(root, file_path=str(path))
    assert result.output.startswith(f"Showing lines 1-{DEFAULT_LINE_LIMIT} of {DEFAULT_LINE_LIMIT + 200} total lines.")
    assert result.output.rstrip().endswith(str(DEFAULT_LINE_LIMIT - 1))


async def test_long_lines_are_cut_and_total_output_is_capped(root: Path) -> None:
    path = root / "min.js"
    path.write_text(("x" * 5000 + "\n") * 30)
    result = await read(root, file_path=str(path))
    body = result.output.split("\n\n---\n\n", 1)[1]
    lines = body.splitlines()
    assert lines[0] == "x" * 2000 + "... [truncated]"
    assert lines[-1].endswith("... [truncated]")
    assert len(body) <= MAX_OUTPUT_CHARS + len("... [truncated]")
    assert result.extra["truncated"] is True
    assert result.output.startswith(f"Showing lines 1-{len(lines)} of 30 total lines.")


async def test_binary_file_is_reported_not_dumped(root: Path) -> None:
    path = root / "img.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    seen: list[Path] = []
    result = await read(root, seen, file_path=str(path))
    assert not result.is_error
    assert result.output == "Cannot display content of binary file: img.png"
    assert seen == [path.resolve()]


async def test_invalid_utf8_is_replaced(root: Path) -> None:
    path = root / "latin1.txt"
    path.write_bytes(b"caf\xe9 ok\nnext\n")
    result = await read(root, file_path=str(path))
    assert result.output == "caf\ufffd ok\nnext"


async def test_utf16_with_bom_is_decoded(root: Path) -> None:
    path = root / "w.txt"
    path.write_bytes("héllo\nwörld\n".encode("utf-16"))
    result = await read(root, file_path=str(path))
    assert result.output == "héllo\nwörld"


async def test_missing_file_directory_and_offset_past_end(root: Path) -> None:
    missing = await read(root, file_path=str(root / "nope.txt"))
    assert missing.is_error and "File not found" in missing.output
    directory = await read(root, file_path=str(root))
    assert directory.is_error and "list_directory" in directory.output
    (root / "short.txt").write_text("one\n")
    past = await read(root, file_path=str(root / "short.txt"), offset=5)
    assert past.is_error and "past the end" in past.output


async def test_empty_file(root: Path) -> None:
    (root / "empty.txt").write_text("")
    result = await read(root, file_path=str(root / "empty.txt"))
    assert not result.is_error and "is empty" in result.output
