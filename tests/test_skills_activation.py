"""Glob semantics and the bucketed activation index (Qwen Code's ``skill-activation.ts``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qwen_lsp.matching.globs import (
    MAX_GLOB_LENGTH,
    ActivationIndex,
    InvalidGlob,
    compile_glob,
    project_relative,
)


def matches(pattern: str, path: str) -> bool:
    return any(g.matches(path) != g.negated for g in compile_glob(pattern))


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.js", ".eslintrc.js", True),  # dot: true
        ("**/*.js", "a/.hidden/x.js", True),
        ("**/*.js", "index.js", True),  # globstar matches zero directories
        ("**/*.js", "a/b.ts", False),
        ("*.ts", "a/b.ts", False),  # * never crosses a slash
        ("*.ts", "b.ts", True),
        ("src/**", "src", True),
        ("src/**", "src/a/b/c.py", True),
        ("src/**", "srcx/a.py", False),
        ("src/{api,web}/*.ts", "src/web/a.ts", True),
        ("src/{api,web}/*.ts", "src/cli/a.ts", False),
        ("file{1..3}.txt", "file2.txt", True),
        ("file{1..3}.txt", "file4.txt", False),
        ("*.@(ts|tsx)", "a.tsx", True),
        ("*.@(ts|tsx)", "a.js", False),
        ("!**/*.md", "a.ts", True),
        ("!**/*.md", "docs/a.md", False),
        ("!{a,b}.ts", "a.ts", False),  # negation covers every brace alternative
        ("!{a,b}.ts", "c.ts", True),
        ("!src/**", "src", False),
        ("*.TS", "a.ts", False),  # case-sensitive everywhere, like picomatch
        ("./src/*.ts", "src/a.ts", True),
        ("package.json", "package.json", True),
        ("package.json", "a/package.json", False),
        ("src/**/test_*.py", "src/test_x.py", True),
        ("src/**/test_*.py", "src/a/b/test_x.py", True),
    ],
)
def test_glob_semantics_follow_picomatch_with_dot(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


def test_overlong_glob_is_invalid() -> None:
    with pytest.raises(InvalidGlob, match="exceeds maximum allowed length"):
        compile_glob("a" * (MAX_GLOB_LENGTH + 1))


def test_invalid_glob_is_dropped_and_the_skills_other_globs_stay() -> None:
    index = ActivationIndex([("s", ["a" * (MAX_GLOB_LENGTH + 1), "**/*.py"])])
    assert [(d.skill, d.pattern[:3]) for d in index.dropped] == [("s", "aaa")]
    assert index.match("x/y.py") == ["s"]


def test_match_returns_every_matching_skill_in_precedence_order_and_honours_skip() -> None:
    index = ActivationIndex([("b", ["**/*.py"]), ("a", ["src/**"]), ("c", ["docs/*.md"])])
    assert index.match("src/x.py") == ["b", "a"]
    assert index.match("src/x.py", skip={"b"}.__contains__) == ["a"]
    assert index.match("docs/a.md") == ["c"]
    assert index.match("other.txt") == []


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/w/repo/src/a.ts", "src/a.ts"),
        ("src/a.ts", "src/a.ts"),  # relative paths resolve against the root
        ("/w/repo/src/../b.ts", "b.ts"),
        ("/w/other/a.ts", None),
        ("/w/repo", None),
        ("../x.ts", None),
        ("/w/repository/a.ts", None),  # a sibling sharing the prefix is outside
    ],
)
def test_project_relative(path: str, expected: str | None) -> None:
    assert project_relative(path, Path("/w/repo")) == expected


_SEGMENTS = st.sampled_from(["src", "lib", "a", ".cfg", "api", "x.ts", "y.py", ".eslintrc.js", "b.test.ts"])
_GLOB_PARTS = st.sampled_from(
    ["src", "lib", "api", "*", "**", "*.ts", "*.py", "*.js", "{a,api}", "*.{ts,py}", "x.*", "?.ts", ".cfg"]
)


@settings(max_examples=300, deadline=None)
@given(
    globs=st.lists(st.lists(_GLOB_PARTS, min_size=1, max_size=4).map("/".join), min_size=1, max_size=12),
    path=st.lists(_SEGMENTS, min_size=1, max_size=5).map("/".join),
)
def test_bucketed_index_agrees_with_trying_every_glob(globs: list[str], path: str) -> None:
    skills = [(f"s{i}", [g]) for i, g in enumerate(globs)]
    brute = [name for name, [g] in skills if matches(g, path)]
    assert ActivationIndex(skills).match(path) == brute
