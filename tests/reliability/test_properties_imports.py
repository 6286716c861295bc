"""Property tests of ``@import`` scanning and expansion (upstream's ``findImports``; context files are repository content).

Properties: the scanner agrees with a one-line reference model of
``findImports`` (an import is a whitespace-separated word that starts with ``@`` and
whose path starts with ``.``, ``/`` or an ASCII letter); expansion never
raises, leaves text without imports untouched, keeps missing imports
verbatim, and never brings in text from outside the project.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from qwen_lsp.context import find_imports, process_imports
from qwen_lsp.context.code_regions import CodeRegions, find_code_regions
from qwen_lsp.context.imports import ImportTrace

_WORD = re.compile(r"[^ \t\n\r]+")
_PATH_START = re.compile(r"[./A-Za-z]")


def reference_imports(content: str) -> list[tuple[int, int, str]]:
    return [
        (m.start(), m.end(), m.group()[1:])
        for m in _WORD.finditer(content)
        if m.group().startswith("@") and _PATH_START.match(m.group(), 1)
    ]


_TOKENS = ["@", ".", "/", "a", "Z", "1", "é", " ", "\t", "\n", "\r", "\f", "\u00a0", "`", "-", "~", "_", "x@", "@./", "../"]
_TEXT = st.lists(st.sampled_from(_TOKENS), max_size=40).map("".join)
_INSIDE_TEXT = st.lists(st.sampled_from([t for t in _TOKENS if "/" not in t and "." not in t]), max_size=40).map("".join)
"""Imports in this text can only name missing files inside the project (no `/`, no `.`)."""


@settings(max_examples=300)
@given(content=_TEXT)
def test_scanner_agrees_with_the_word_model(content: str) -> None:
    assert [tuple(r) for r in find_imports(content)] == reference_imports(content)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imports") / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "sub").mkdir()
    (root / "a.md").write_text("A-TEXT @./sub/b.md")
    (root / "sub" / "b.md").write_text("B-TEXT @../a.md @../../outside.md")
    (root.parent / "outside.md").write_text("OUTSIDE-TEXT")
    (root / "QWEN.md").write_text("")
    return root


_NAMES = st.sampled_from(["./a.md", "a.md", "./sub/b.md", "sub", "../outside.md", "../repo/a.md", "./missing.md",
                          "/etc/hostname", "https://x.y", "./QWEN.md", "@./a.md", "./a.md."])
_PIECE = st.one_of(_NAMES.map(lambda n: "@" + n), st.sampled_from([" ", "\n", "`", "```\n", "text", "x@", "\t"]))


@settings(max_examples=120)
@given(pieces=st.lists(_PIECE, max_size=12), fmt=st.sampled_from(["tree", "flat"]))
def test_expansion_never_raises_and_never_reads_outside(project: Path, pieces: list[str], fmt: str) -> None:
    content = "".join(pieces)
    trace = ImportTrace()
    out = process_imports(content, str(project / "QWEN.md"), import_format=fmt, trace=trace)
    assert isinstance(out, str)
    assert "OUTSIDE-TEXT" not in out
    assert all(dep.startswith(str(project)) for dep in trace.dependencies)
    assert all(p.path.startswith(str(project)) for p in trace.problems)
    if not find_imports(content) and fmt == "tree":
        assert out == content


@settings(max_examples=120)
@given(content=_INSIDE_TEXT)
def test_imports_of_missing_files_leave_the_text_unchanged(tmp_path_factory: pytest.TempPathFactory, content: str) -> None:
    empty = tmp_path_factory.getbasetemp() / "empty-project"
    (empty / ".git").mkdir(parents=True, exist_ok=True)
    trace = ImportTrace()
    out = process_imports(content, str(empty / "QWEN.md"), trace=trace)
    assert out == content  # missing imports are kept silently (as ``memoryImportProcessor.ts``)
    assert trace.problems == []


_MARKDOWN = st.lists(
    st.sampled_from(["@./a.md", "@b", " ", "\n", "\n\n", "`", "``", "```\n", "~~~\n", "    ", "> ", "- ", "1. ", "text", "\r\n", "|"]),
    max_size=30,
).map("".join)


@settings(max_examples=400)
@given(content=_MARKDOWN, order=st.randoms(use_true_random=False))
@example(content="See @./a.md here.\n\nUse ` @b` in code.", order=random.Random(0))
@example(content="@./a.md and @b\n- ` @./a.md`\n\n    @b", order=random.Random(1))
def test_the_cheap_code_test_agrees_with_the_parse_whatever_the_order(content: str, order) -> None:
    """``CodeRegions.contains`` answers as the full parse for every reference, asked in any order on one object.

    Its shortcuts (no fence before, no container or indent on the line, no
    backtick in the paragraph, a paragraph already found clear) may only
    skip the parse, never change an answer.
    """
    regions = find_code_regions(content)
    positions = [start for start, _end, _path in (tuple(r) for r in find_imports(content))]
    order.shuffle(positions)
    code = CodeRegions(content)
    for pos in positions + positions:
        assert code.contains(pos) == any(lo <= pos < hi for lo, hi in regions), (content, pos)
