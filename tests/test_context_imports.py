"""The @import scanner and expansion as Qwen Code 0.24's ``memoryImportProcessor.ts`` behaves."""

from __future__ import annotations

from pathlib import Path

import pytest

from qwen_lsp.context import find_imports, process_imports
from qwen_lsp.context.imports import ImportTrace


def make(root: Path, files: dict[str, str]) -> None:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def expand(root: Path, name: str, fmt: str = "tree") -> tuple[str, ImportTrace]:
    trace = ImportTrace()
    path = root / name
    return process_imports(path.read_text(encoding="utf-8"), str(path), import_format=fmt, trace=trace), trace


def test_scanner_rules() -> None:
    text = "@./a.md x foo@bar.com (@./b.md) @9 @~/c @-d\t@Docs/e.md. @/abs"
    assert [r.path for r in find_imports(text)] == ["./a.md", "Docs/e.md.", "/abs"]


def test_tree_expansion_code_regions_email_missing_and_trailing(tmp_path: Path) -> None:
    make(tmp_path, {
        "QWEN.md": "See @./a.md and foo@bar.com (@./a.md)\n\n```\n@./a.md\n```\n\nInline `@./a.md` here\n@./missing.md stays\n@./a.md. dot\n",
        "a.md": "A\n",
    })
    out, trace = expand(tmp_path, "QWEN.md")
    assert out == (
        "See <!-- Imported from: ./a.md -->\nA\n\n<!-- End of import from: ./a.md --> and foo@bar.com (@./a.md)\n\n"
        "```\n@./a.md\n```\n\nInline `@./a.md` here\n@./missing.md stays\n@./a.md. dot\n"
    )
    assert trace.problems == []
    assert str(tmp_path / "missing.md") in trace.dependencies  # creating it later must invalidate


def test_traversal_url_and_absolute_outside_are_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    make(tmp_path / "p", {"QWEN.md": "@../../etc/passwd @https://x.y/z @/etc/hosts\n"})
    out, trace = expand(tmp_path / "p", "QWEN.md")
    assert out == (
        "<!-- Import failed: ../../etc/passwd - Path traversal attempt --> "
        "<!-- Import failed: https://x.y/z - Path traversal attempt --> "
        "<!-- Import failed: /etc/hosts - Path traversal attempt -->\n"
    )
    assert len(trace.problems) == 3 and "refused" in caplog.text


def test_cycle_is_marked_already_processed(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./c1.md\n", "c1.md": "one @./c2.md\n", "c2.md": "two @./c1.md\n"})
    out, trace = expand(tmp_path, "QWEN.md")
    assert "two <!-- File already processed: ./c1.md -->" in out
    assert any("cycle" in p.message for p in trace.problems)


def test_depth_limit_five_on_a_fifty_deep_chain(tmp_path: Path) -> None:
    files = {f"c{i}.md": f"chain {i} @./c{i + 1}.md\n" for i in range(1, 51)}
    files["QWEN.md"] = "@./c1.md\n"
    make(tmp_path, files)
    out, trace = expand(tmp_path, "QWEN.md")
    assert "chain 5 @./c6.md" in out  # c5 is read at depth 5 and left unexpanded
    assert "chain 6" not in out
    assert out.count("<!-- Imported from:") == 5
    assert any("maximum import depth" in p.message for p in trace.problems)


def test_directory_import_keeps_a_failure_comment(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./sub\n", "sub/x.md": "x"})
    out, _ = expand(tmp_path, "QWEN.md")
    assert out == "<!-- Import failed: ./sub - EISDIR: illegal operation on a directory, read -->\n"


def test_large_import_is_read_whole(tmp_path: Path) -> None:
    big = "".join(f"line {n}: {'x' * 60}\n" for n in range(3000))  # past one read(2) chunk
    make(tmp_path, {"QWEN.md": "@./big.md\n", "big.md": big})
    out, _ = expand(tmp_path, "QWEN.md")
    assert out == f"<!-- Imported from: ./big.md -->\n{big}\n<!-- End of import from: ./big.md -->\n"


def test_flat_mode_each_file_once_in_discovery_order(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "ROOT @./a.md @./b.md\n", "a.md": "A @./b.md @./c.md\n", "b.md": "B @./a.md\n", "c.md": "C\n"})
    out, _ = expand(tmp_path, "QWEN.md", "flat")
    names = [line.split("/")[-1].rstrip(" -") for line in out.splitlines() if line.startswith("--- File:")]
    assert names == ["QWEN.md", "b.md", "a.md", "c.md"]  # imports walked last to first, as 0.24
    assert out.startswith(f"--- File: {tmp_path / 'QWEN.md'} ---\nROOT @./a.md @./b.md\n--- End of File:")


def test_nested_code_regions_in_lists_quotes_and_indented_code(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "* item `@./a.md`\n> quote @./a.md\n\n    @./a.md indented\n", "a.md": "A"})
    out, _ = expand(tmp_path, "QWEN.md")
    assert out == "* item `@./a.md`\n> quote <!-- Imported from: ./a.md -->\nA\n<!-- End of import from: ./a.md -->\n\n    @./a.md indented\n"


def _imported(out: str) -> int:
    return out.count("<!-- Imported from:")


@pytest.mark.parametrize(
    ("text", "imported"),
    [
        ("- item `cat @./a.md now`\n", 1),  # list items are never walked for code (0.24 / marked)
        ("1. step\n   ```\n   @./a.md\n   ```\n", 1),  # nor is a fence inside a list item
        ("| a |\n|---|\n| `x @./a.md y` |\n", 1),  # nor a table cell
        ("Para `x @./a.md y` end\n", 0),  # a top-level code span is
        ("```\n@./a.md\n```\n", 0),
        ("> one line `x @./a.md y`\n", 0),  # a one-line quote child is found
        ("> first\n> `x @./a.md y`\n", 1),  # a two-line quote paragraph is not
        ("> a\n>\n> `x @./a.md y`\n", 1),  # nothing after a blank quoted line is
        ("> lazy\n`x @./a.md y`\n", 0),  # a lazy continuation line keeps it found
    ],
)
def test_code_regions_follow_qwen_codes_marked_walk(tmp_path: Path, text: str, imported: int) -> None:
    make(tmp_path, {"QWEN.md": text, "a.md": "A"})
    out, _ = expand(tmp_path, "QWEN.md")
    assert _imported(out) == imported


def test_crlf_regions_drift_like_qwen_code(tmp_path: Path) -> None:
    """marked lexes CRLF as LF and its offsets are applied to the CRLF text, so regions land early."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.md").write_text("A")
    # LF: the fence protects its line. CRLF: 20 line breaks earlier shift the (14-character) region off it.
    body = "line\n" * 20 + "```\n@./a.md\n```\n"
    for newline, imported in (("\n", 0), ("\r\n", 1)):
        path = tmp_path / "QWEN.md"
        path.write_bytes(body.replace("\n", newline).encode())
        out = process_imports(path.read_bytes().decode(), str(path))
        assert _imported(out) == imported, newline


def test_an_import_naming_the_project_root_itself_fails_as_a_directory(tmp_path: Path) -> None:
    # "@." and "@../<root>" name the root directory from above it: Qwen Code 0.24 reads it and
    # reports EISDIR. Its parent lies outside the project, which must not make it a symlink refusal.
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    ctx = project / "QWEN.md"
    trace = ImportTrace()
    out = process_imports("see @. and @../proj here\n", str(ctx), trace=trace)
    assert out == (
        "see <!-- Import failed: . - EISDIR: illegal operation on a directory, read --> and "
        "<!-- Import failed: ../proj - EISDIR: illegal operation on a directory, read --> here\n"
    )
    assert [p.message for p in trace.problems] == [
        "import '.' failed: EISDIR: illegal operation on a directory, read",
        "import '../proj' failed: EISDIR: illegal operation on a directory, read",
    ]
