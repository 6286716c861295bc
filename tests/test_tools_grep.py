"""grep_search: output layout, case, filters, caps, skipped files, touched paths."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qwen_lsp.agent.tool import ToolContext, ToolResult
from qwen_lsp.agent.tools.grep import MAX_FILE_BYTES, MAX_OUTPUT_CHARS, GrepTool
from qwen_lsp.matching.linear_regex import compile_linear


async def grep(root: Path, seen: list[Path] | None = None, **args) -> ToolResult:
    ctx = ToolContext(workspace_root=root, cwd=root, touched=(seen.append if seen is not None else lambda _p: None))
    return await GrepTool().run(args, ctx)


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


async def test_grouped_output_case_insensitive(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    a = write(root, "src/a.py", "def Alpha():\n    return 1\n    # alpha again\n")
    b = write(root, "src/b.py", "x = ALPHA\n")
    write(root, "src/c.py", "nothing here\n")
    seen: list[Path] = []
    result = await grep(root, seen, pattern="alpha")
    assert result.output == (
        'Found 3 matches for pattern "alpha" in the workspace directory:\n---\n'
        "File: src/a.py\nL1: def Alpha():\nL3: # alpha again\n---\n"
        "File: src/b.py\nL1: x = ALPHA\n---\n"
    )
    assert seen == [a, b]


async def test_glob_filter_by_name_and_by_path(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    write(root, "pkg/mod.py", "needle\n")
    write(root, "pkg/mod.ts", "needle\n")
    write(root, "docs/readme.md", "needle\n")
    by_name = await grep(root, pattern="needle", glob="*.py")
    assert "File: pkg/mod.py" in by_name.output and "mod.ts" not in by_name.output
    assert '(filter: "*.py")' in by_name.output
    by_path = await grep(root, pattern="needle", glob="docs/**")
    assert "File: docs/readme.md" in by_path.output and "pkg/" not in by_path.output
    braces = await grep(root, pattern="needle", glob="*.{py,ts}")
    assert braces.output.startswith("Found 2 matches")


async def test_path_may_be_a_file_or_directory(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    f = write(root, "one/x.txt", "hit\n")
    write(root, "two/y.txt", "hit\n")
    seen: list[Path] = []
    in_dir = await grep(root, seen, pattern="hit", path=str(root / "one"))
    assert 'in path "' in in_dir.output and "File: x.txt" in in_dir.output and "y.txt" not in in_dir.output
    assert seen == [root / "one", f]
    in_file = await grep(root, pattern="hit", path=str(f))
    assert "File: x.txt\nL1: hit" in in_file.output


async def test_skips_binary_large_and_ignored_files(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    write(root, "ok.txt", "target\n")
    write(root, "bin.dat", b"target\x00\x01\x02")
    write(root, "huge.txt", "target\n" + "x" * MAX_FILE_BYTES)
    write(root, ".git/config", "target\n")
    write(root, "node_modules/m/index.js", "target\n")
    write(root, "gen/out.txt", "target\n")
    write(root, ".gitignore", "gen/\n")
    result = await grep(root, pattern="target")
    assert result.output.startswith("Found 1 match for")
    assert "File: ok.txt" in result.output


async def test_invalid_utf8_lines_still_match(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    write(root, "l1.txt", b"caf\xe9 needle\n")
    result = await grep(root, pattern="needle")
    assert "L1: caf\ufffd needle" in result.output


async def test_limit_and_character_cap(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    write(root, "many.txt", "".join(f"match {i}\n" for i in range(50)))
    limited = await grep(root, pattern="match", limit=10)
    assert limited.output.startswith("Found 50 matches")
    assert "L10: match 9" in limited.output and "L11:" not in limited.output
    assert limited.output.endswith(" [40 lines truncated] ...")
    write(root, "wide.txt", "".join(f"wide {'y' * 1500} {i}\n" for i in range(40)))
    wide = await grep(root, pattern="wide")
    assert len(wide.output) < MAX_OUTPUT_CHARS + 500
    assert "lines truncated] ..." in wide.output


async def test_no_matches(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    write(root, "a.txt", "nothing\n")
    result = await grep(root, pattern="absent", glob="*.txt")
    assert not result.is_error
    assert result.output == 'No matches found for pattern "absent" in the workspace directory (filter: "*.txt").'


_LINE_TEXT = st.text(alphabet="ab \té", max_size=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(_LINE_TEXT, max_size=8),
    breaks=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=8, max_size=8),
    final_break=st.booleans(),
    pattern=st.sampled_from(["a", "^a", "a$", "^$", "b*", "a\\s+b", "^\\s*$", "é", "ab|ba", "^[ab ]+$", "\\bb"]),
)
def test_whole_file_search_reports_exactly_the_lines_that_match(tmp_path: Path, lines, breaks, final_break, pattern) -> None:
    """The file-at-once search finds the lines a per-line search would, with their numbers (any line breaks)."""
    root = tmp_path.resolve()
    text = "".join(line + brk for line, brk in zip(lines, breaks))
    if lines and not final_break:
        text = text[: -len(breaks[len(lines) - 1])]
    (root / "f.txt").write_bytes(text.encode("utf-8"))
    per_line = compile_linear(pattern, ignore_case=True)
    expected = [
        f"L{n}: {line.strip()}"
        for n, line in enumerate(io.StringIO(text, newline=""), start=1)
        if per_line.search(line.rstrip("\r\n")) is not None
    ]
    output = asyncio.run(grep(root, pattern=pattern)).output
    assert [row for row in output.splitlines() if row.startswith("L")] == expected
