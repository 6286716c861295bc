"""``@import`` expansion at the edges the first suite left open, with every problem's path and message.

Each case here was a surviving mutant of ``qwen_lsp/context/imports.py``
(see ``bench/mutation.py``). Expected output is Qwen Code 0.24's (``memoryImportProcessor.ts``):
the scanner's word rule, ENOENT kept silently, per-chain cycles, the depth
limit in both formats, flat mode's reverse walk and single emission.
"""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path

import pytest

from qwen_lsp.context import find_imports, process_imports
from qwen_lsp.context.imports import MAX_IMPORTED_BYTES, MAX_IMPORTS, ImportTrace, LeavesProject
from qwen_lsp.context.text import Problem

LIMIT = f"Import limit reached ({MAX_IMPORTS} imports or {MAX_IMPORTED_BYTES >> 20} MiB per context build)"


def make(root: Path, files: dict[str, str]) -> None:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def expand(path: Path, fmt: str = "tree", max_depth: int = 5) -> tuple[str, ImportTrace]:
    trace = ImportTrace()
    out = process_imports(path.read_text(encoding="utf-8"), str(path), import_format=fmt, max_depth=max_depth, trace=trace)
    return out, trace


def block(path: str, inner: str) -> str:
    return f"<!-- Imported from: {path} -->\n{inner}\n<!-- End of import from: {path} -->"


def flat(*files: tuple[Path, str]) -> str:
    return "\n\n".join(f"--- File: {p} ---\n{t}\n--- End of File: {p} ---" for p, t in files)


# --- the scanner ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("a @ b @./x.md", ["./x.md"]),  # a lone `@` then a space is no import, and scanning goes on
        ("@", []),
        ("x @", []),
        ("@ @./x.md", ["./x.md"]),
        ("@@./x.md", []),  # the path `@./x.md` starts with `@`; scanning resumes after it
        ("@./a.md@./b.md", ["./a.md@./b.md"]),
        ("@./a.md\t@./b.md\r@./c.md\n@./d.md", ["./a.md", "./b.md", "./c.md", "./d.md"]),
        ("@a\n@Z @/x @.hidden", ["a", "Z", "/x", ".hidden"]),
        ("@é.md @_x @-x @1 @~/x", []),
        ("x@./a.md", []),
    ],
)
def test_scanner_word_rule(text: str, paths: list[str]) -> None:
    assert [r.path for r in find_imports(text)] == paths


def test_scanner_offsets_cover_exactly_the_at_sign_and_path() -> None:
    text = "see @./a.md, then @b.md"
    refs = find_imports(text)
    assert [(text[r.start : r.end], r.start) for r in refs] == [("@./a.md,", 4), ("@b.md", 18)]


# --- tree mode --------------------------------------------------------------------------------------


def test_a_context_file_in_a_subfolder_imports_a_parent_file_inside_the_repo(tmp_path: Path) -> None:
    make(tmp_path, {"pkg/QWEN.md": "@../shared.md\n", "shared.md": "S"})
    out, trace = expand(tmp_path / "pkg" / "QWEN.md")
    assert out == block("../shared.md", "S") + "\n"
    assert trace.problems == []
    assert trace.dependencies == {str(tmp_path / "shared.md")}


def test_a_valid_import_after_a_missing_one_is_expanded(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./missing.md @./a.md\n", "a.md": "A"})
    out, trace = expand(tmp_path / "QWEN.md")
    assert out == "@./missing.md " + block("./a.md", "A") + "\n"
    assert trace.problems == []
    assert trace.dependencies == {str(tmp_path / "missing.md"), str(tmp_path / "a.md")}


def test_siblings_may_import_the_same_file_twice_in_tree_mode(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./a.md @./b.md", "a.md": "A @./c.md", "b.md": "B @./c.md", "c.md": "C"})
    out, trace = expand(tmp_path / "QWEN.md")
    assert out == block("./a.md", "A " + block("./c.md", "C")) + " " + block("./b.md", "B " + block("./c.md", "C"))
    assert trace.problems == []


def test_traversal_and_url_problems_name_the_importing_file(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./sub/a.md", "sub/a.md": "@../../x.md @http://e.x/y"})
    out, trace = expand(tmp_path / "QWEN.md")
    a = str(tmp_path / "sub" / "a.md")
    assert out == block(
        "./sub/a.md",
        "<!-- Import failed: ../../x.md - Path traversal attempt --> <!-- Import failed: http://e.x/y - Path traversal attempt -->",
    )
    assert trace.problems == [
        Problem(a, "import '../../x.md' refused: outside the project or a URL"),
        Problem(a, "import 'http://e.x/y' refused: outside the project or a URL"),
    ]
    assert trace.dependencies == {a}


def test_refused_imports_inside_code_stay_verbatim_without_a_problem(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "```\n@../../x.md @./QWEN.md\n```\n"})
    out, trace = expand(tmp_path / "QWEN.md")
    assert out == "```\n@../../x.md @./QWEN.md\n```\n"
    assert trace.problems == []


def test_cycle_problem_names_the_file_that_closes_it(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./c1.md", "c1.md": "one @./c2.md", "c2.md": "two @./c1.md"})
    out, trace = expand(tmp_path / "QWEN.md")
    assert out == block("./c1.md", "one " + block("./c2.md", "two <!-- File already processed: ./c1.md -->"))
    assert trace.problems == [Problem(str(tmp_path / "c2.md"), "import './c1.md' is a cycle; marked as already processed")]


def test_depth_limit_problem_names_the_file_left_unexpanded(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./c1.md", "c1.md": "1 @./c2.md", "c2.md": "2 @./c3.md", "c3.md": "3"})
    out, trace = expand(tmp_path / "QWEN.md", max_depth=2)
    assert out == block("./c1.md", "1 " + block("./c2.md", "2 @./c3.md"))
    assert trace.problems == [Problem(str(tmp_path / "c2.md"), "maximum import depth (2) reached; its imports are left as text")]


def test_a_directory_import_fails_with_nodes_message(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./sub @./a.md", "sub/x.md": "x", "a.md": "A"})
    out, trace = expand(tmp_path / "QWEN.md")
    assert out == "<!-- Import failed: ./sub - EISDIR: illegal operation on a directory, read --> " + block("./a.md", "A")
    assert trace.problems == [Problem(str(tmp_path / "QWEN.md"), "import './sub' failed: EISDIR: illegal operation on a directory, read")]


def test_an_unreadable_import_inside_code_stays_verbatim(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "`@./sub`", "sub/x.md": "x"})
    out, trace = expand(tmp_path / "QWEN.md")
    assert out == "`@./sub`"
    assert trace.problems == []


def test_a_file_over_the_budget_is_refused_before_it_is_read(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./big.md @./a.md", "big.md": "x" * (MAX_IMPORTED_BYTES + 1), "a.md": "A"})
    out, trace = expand(tmp_path / "QWEN.md")
    message = f"File larger than the {MAX_IMPORTED_BYTES >> 20} MiB import limit"
    assert out == f"<!-- Import failed: ./big.md - {message} --> " + block("./a.md", "A")
    assert trace.problems == [Problem(str(tmp_path / "QWEN.md"), f"import './big.md' failed: {message}")]


def test_the_import_count_budget_refuses_the_rest_and_warns_once(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./a.md " * (MAX_IMPORTS + 2), "a.md": "A"})
    out, trace = expand(tmp_path / "QWEN.md")
    assert out.count(block("./a.md", "A")) == MAX_IMPORTS
    assert out.count(f"<!-- Import failed: ./a.md - {LIMIT} -->") == 2
    assert trace.problems == [
        Problem(str(tmp_path / "QWEN.md"), f"import './a.md' refused, and every later one in this build: {LIMIT}")
    ]
    assert trace.imports == MAX_IMPORTS + 1


def test_the_byte_budget_counts_every_expansion(tmp_path: Path) -> None:
    half = "y" * (MAX_IMPORTED_BYTES // 2)
    make(tmp_path, {"QWEN.md": "@./h.md @./h.md @./h.md @./s.md", "h.md": half, "s.md": "S"})
    out, trace = expand(tmp_path / "QWEN.md")
    assert out.count(block("./h.md", half)) == 2
    assert out.endswith(f"<!-- Import failed: ./h.md - {LIMIT} --> <!-- Import failed: ./s.md - {LIMIT} -->")
    assert trace.imported_bytes == 2 * len(half)


def test_invalid_utf8_is_replaced_and_reported_for_the_imported_file(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./bad.md"})
    (tmp_path / "bad.md").write_bytes(b"ok \xff end")
    out, trace = expand(tmp_path / "QWEN.md")
    assert out == block("./bad.md", "ok \ufffd end")
    assert [(p.path, p.message.split(";")[0]) for p in trace.problems] == [
        (str(tmp_path / "bad.md"), "not valid UTF-8 (first bad byte at offset 3)")
    ]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside"
    target.mkdir()
    (target / "secret.md").write_text("SECRET")
    return target


def test_a_symlinked_file_leading_outside_is_refused(tmp_path: Path, outside: Path) -> None:
    repo = tmp_path / "repo"
    make(repo, {"QWEN.md": "@./l.md @./in.md", "in.md": "IN"})
    os.symlink(outside / "secret.md", repo / "l.md")
    for fmt in ("tree", "flat"):
        out, trace = expand(repo / "QWEN.md", fmt)
        assert "SECRET" not in out
        assert trace.problems == [Problem(str(repo / "QWEN.md"), "import './l.md' refused: a symlink leads outside the project")]
    out, _ = expand(repo / "QWEN.md")
    assert out == "<!-- Import failed: ./l.md - Symlink resolves outside the project --> " + block("./in.md", "IN")


def test_a_symlinked_directory_leading_outside_is_refused(tmp_path: Path, outside: Path) -> None:
    repo = tmp_path / "repo"
    make(repo, {"QWEN.md": "@./d/secret.md"})
    os.symlink(outside, repo / "d")
    for fmt in ("tree", "flat"):
        out, trace = expand(repo / "QWEN.md", fmt)
        assert "SECRET" not in out
        assert trace.problems == [
            Problem(str(repo / "QWEN.md"), "import './d/secret.md' refused: a symlink leads outside the project")
        ]
    out, _ = expand(repo / "QWEN.md")
    assert out == "<!-- Import failed: ./d/secret.md - Symlink resolves outside the project -->"


def test_a_symlink_inside_the_project_is_followed(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./l.md", "real.md": "R"})
    os.symlink(tmp_path / "real.md", tmp_path / "l.md")
    out, trace = expand(tmp_path / "QWEN.md")
    assert out == block("./l.md", "R")
    assert trace.problems == []


# --- flat mode --------------------------------------------------------------------------------------


def test_flat_mode_honours_the_depth_limit_and_names_the_file(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "0 @./c1.md", "c1.md": "1 @./c2.md", "c2.md": "2 @./c3.md", "c3.md": "3"})
    out, trace = expand(tmp_path / "QWEN.md", "flat", max_depth=2)
    assert out == flat((tmp_path / "QWEN.md", "0 @./c1.md"), (tmp_path / "c1.md", "1 @./c2.md"), (tmp_path / "c2.md", "2 @./c3.md"))
    assert trace.problems == [Problem(str(tmp_path / "c2.md"), "maximum import depth (2) reached; its imports are not expanded")]


def test_flat_mode_a_shallower_route_reexpands_without_emitting_twice(tmp_path: Path) -> None:
    # Walked last to first: b (depth 1) → a at depth 2, the limit: emitted, not expanded. Then a
    # again at depth 1, a shallower route: its imports are expanded now (c), a is not emitted twice.
    make(tmp_path, {"QWEN.md": "@./a.md @./b.md", "b.md": "B @./a.md", "a.md": "A @./c.md", "c.md": "C"})
    out, trace = expand(tmp_path / "QWEN.md", "flat", max_depth=2)
    assert out == flat(
        (tmp_path / "QWEN.md", "@./a.md @./b.md"), (tmp_path / "b.md", "B @./a.md"), (tmp_path / "a.md", "A @./c.md"),
        (tmp_path / "c.md", "C"),
    )
    depth = "maximum import depth (2) reached; its imports are not expanded"
    assert trace.problems == [Problem(str(tmp_path / "a.md"), depth), Problem(str(tmp_path / "c.md"), depth)]


def test_flat_mode_problems_traversal_code_missing_and_directories(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@../../x.md `@../../y.md` @./gone.md @./sub @./a.md", "a.md": "A", "sub/z": "z"})
    out, trace = expand(tmp_path / "QWEN.md", "flat")
    root = str(tmp_path / "QWEN.md")
    assert out == flat((tmp_path / "QWEN.md", "@../../x.md `@../../y.md` @./gone.md @./sub @./a.md"), (tmp_path / "a.md", "A"))
    assert trace.problems == [
        Problem(root, "import './sub' failed: EISDIR: illegal operation on a directory, read"),
        Problem(root, "import '../../x.md' refused: outside the project or a URL"),
    ]
    assert trace.dependencies == {str(tmp_path / n) for n in ("gone.md", "sub", "a.md")}


def test_flat_mode_leaves_imports_in_code_alone(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "```\n@./a.md\n```\n", "a.md": "A"})
    out, trace = expand(tmp_path / "QWEN.md", "flat")
    assert out == flat((tmp_path / "QWEN.md", "```\n@./a.md\n```"))
    assert trace.problems == []


def test_flat_mode_spends_the_budget_once_per_file(tmp_path: Path) -> None:
    half = "y" * (MAX_IMPORTED_BYTES // 2 + 1)
    text = "@../out.md @./s.md @./h2.md @./h1.md @./h1.md"
    make(tmp_path, {"QWEN.md": text, "h1.md": half, "h2.md": half, "s.md": "S"})
    out, trace = expand(tmp_path / "QWEN.md", "flat")
    # Walked last to first: h1 is admitted once, h2 is refused, and so is every later one (s);
    # the walk goes on, so the traversal before them is still reported.
    assert out == flat((tmp_path / "QWEN.md", text), (tmp_path / "h1.md", half))
    assert trace.problems == [
        Problem(str(tmp_path / "QWEN.md"), f"import './h2.md' refused, and every later one in this build: {LIMIT}"),
        Problem(str(tmp_path / "QWEN.md"), "import '../out.md' refused: outside the project or a URL"),
    ]


def test_invalid_utf8_in_flat_mode_is_reported_for_the_imported_file(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./bad.md"})
    (tmp_path / "bad.md").write_bytes(b"ok \xff end")
    out, trace = expand(tmp_path / "QWEN.md", "flat")
    assert out == flat((tmp_path / "QWEN.md", "@./bad.md"), (tmp_path / "bad.md", "ok \ufffd end"))
    assert [p.path for p in trace.problems] == [str(tmp_path / "bad.md")]


@pytest.mark.parametrize("fmt", ["tree", "flat"])
def test_a_symlink_loop_fails_with_nodes_message_naming_the_path(tmp_path: Path, fmt: str) -> None:
    make(tmp_path, {"QWEN.md": "@./loop.md"})
    os.symlink("loop.md", tmp_path / "loop.md")
    out, trace = expand(tmp_path / "QWEN.md", fmt)
    message = f"ELOOP: too many symbolic links encountered, access '{tmp_path / 'loop.md'}'"
    assert trace.problems == [Problem(str(tmp_path / "QWEN.md"), f"import './loop.md' failed: {message}")]
    if fmt == "tree":
        assert out == f"<!-- Import failed: ./loop.md - {message} -->"


def test_a_problem_repeated_in_one_build_is_listed_and_logged_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    make(tmp_path, {"QWEN.md": "@../x.md @../x.md"})
    with caplog.at_level(logging.WARNING, logger="qwen_lsp.context.imports"):
        out, trace = expand(tmp_path / "QWEN.md")
    assert out == "<!-- Import failed: ../x.md - Path traversal attempt --> <!-- Import failed: ../x.md - Path traversal attempt -->"
    message = "import '../x.md' refused: outside the project or a URL"
    assert trace.problems == [Problem(str(tmp_path / "QWEN.md"), message)]
    assert [r.getMessage() for r in caplog.records if r.name == "qwen_lsp.context.imports"] == [
        f"{tmp_path / 'QWEN.md'}: {message}"
    ]


def test_trace_load_errors_say_what_and_where(tmp_path: Path, outside: Path) -> None:
    """The errors ImportTrace.load gives back carry errno, message and file, like any OSError."""
    repo = tmp_path / "repo"
    make(repo, {"big.md": "x" * (MAX_IMPORTED_BYTES + 1)})
    os.symlink(outside / "secret.md", repo / "l.md")
    trace = ImportTrace()
    leaves = trace.load(str(repo / "l.md"), str(repo))
    assert isinstance(leaves, LeavesProject)
    assert (leaves.errno, leaves.strerror, leaves.filename) == (
        errno.EACCES, "Symlink resolves outside the project", str(repo / "l.md")
    )
    big = trace.load(str(repo / "big.md"), str(repo))
    assert isinstance(big, OSError) and not isinstance(big, LeavesProject)
    assert (big.errno, big.strerror, big.filename) == (
        errno.EFBIG, f"File larger than the {MAX_IMPORTED_BYTES >> 20} MiB import limit", str(repo / "big.md")
    )


def test_flat_mode_walks_on_after_a_refused_import(tmp_path: Path, outside: Path) -> None:
    repo = tmp_path / "repo"
    make(repo, {"QWEN.md": "@./a.md @./b.md @../x.md @./l.md", "a.md": "A", "b.md": "B"})
    os.symlink(outside / "secret.md", repo / "l.md")
    out, trace = expand(repo / "QWEN.md", "flat")
    # Walked last to first: the link out and the traversal are refused, and a and b still come.
    assert out == flat((repo / "QWEN.md", "@./a.md @./b.md @../x.md @./l.md"), (repo / "b.md", "B"), (repo / "a.md", "A"))
    assert [p.message for p in trace.problems] == [
        "import './l.md' refused: a symlink leads outside the project",
        "import '../x.md' refused: outside the project or a URL",
    ]


def test_a_symlink_to_a_huge_file_inside_the_project_is_refused_before_it_is_read(tmp_path: Path) -> None:
    make(tmp_path, {"QWEN.md": "@./link.md", "big.md": "x" * (MAX_IMPORTED_BYTES + 1)})
    os.symlink(tmp_path / "big.md", tmp_path / "link.md")
    out, trace = expand(tmp_path / "QWEN.md")
    message = f"File larger than the {MAX_IMPORTED_BYTES >> 20} MiB import limit"
    assert out == f"<!-- Import failed: ./link.md - {message} -->"
    assert trace.problems == [Problem(str(tmp_path / "QWEN.md"), f"import './link.md' failed: {message}")]
