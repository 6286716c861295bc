"""Property tests of the ``paths:`` glob compiler and activation index (repository-controlled input).

Properties: compiling any text either works or raises :class:`InvalidGlob`
(nothing else); the index never raises and drops what it cannot compile;
its bucketed lookup agrees with trying every glob; literal globs and
``dir/**`` agree with one-line reference models; ``project_relative``
never answers a path outside the root.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qwen_lsp.matching.globs import ActivationIndex, InvalidGlob, compile_glob, project_relative


@pytest.fixture(autouse=True)
def fresh_glob_cache() -> Iterator[None]:
    compile_glob.cache_clear()
    yield
    compile_glob.cache_clear()


def brute(pattern: str, path: str) -> bool:
    return any(g.matches(path) != g.negated for g in compile_glob(pattern))


_NAME = st.sampled_from(["src", "docs", "a", "ab", "api", "v1", "a.b", ".cfg", "x.ts", "y.test.ts", "z.d.ts", "README.md", "Makefile"])
_GLOB_PART = st.sampled_from(
    ["src", "docs", "a", "api", "v1", "a.b", "*", "**", "a*", "*.ts", "*.test.ts", "*.md", "?.ts", "{a,api}",
     "*.{ts,md}", "+(a|b)", "@(x|y).ts", "[ax]*", "x\\*.ts", ".cfg", "README.md"]
)
_GLOB = st.tuples(st.sampled_from(["", "!", "./"]), st.lists(_GLOB_PART, min_size=1, max_size=4).map("/".join)).map("".join)
_PATH = st.lists(_NAME, min_size=1, max_size=5).map("/".join)


@settings(max_examples=150)
@given(pattern=st.text(alphabet=st.sampled_from("ab./*?[]{}()!+@\\|,^-: é"), max_size=24))
def test_compiling_any_text_works_or_raises_invalid_glob(pattern: str) -> None:
    try:
        parts = compile_glob(pattern)
    except InvalidGlob as exc:
        assert str(exc)
        return
    for part in parts:
        assert isinstance(part.matches("a/b.ts"), bool)


@settings(max_examples=150)
@given(globs=st.lists(st.text(alphabet=st.sampled_from("ab./*?[]{}()!+@\\|,"), max_size=16), max_size=8), path=_PATH)
def test_index_never_raises_and_accounts_for_every_glob(globs: list[str], path: str) -> None:
    index = ActivationIndex([("s", globs)])
    for dropped in index.dropped:
        assert dropped.skill == "s" and dropped.pattern in globs and dropped.message
    assert index.match(path) in ([], ["s"])


@settings(max_examples=250)
@given(globs=st.lists(_GLOB, min_size=1, max_size=10), path=_PATH, skipped=st.sets(st.integers(0, 9)))
def test_bucketed_index_agrees_with_trying_every_glob(globs: list[str], path: str, skipped: set[int]) -> None:
    skills = [(f"s{i}", [g]) for i, g in enumerate(globs)]
    skip = {f"s{i}" for i in skipped}
    expected = [name for name, [g] in skills if name not in skip and brute(g, path)]
    assert ActivationIndex(skills).match(path, skip=skip.__contains__) == expected


@given(names=st.lists(_NAME, min_size=1, max_size=4), path=_PATH)
def test_a_literal_glob_matches_exactly_its_own_path(names: list[str], path: str) -> None:
    literal = "/".join(names)
    index = ActivationIndex([("s", [literal])])
    assert (index.match(path) == ["s"]) is (path == literal)
    assert index.match(literal) == ["s"]


@given(names=st.lists(_NAME, min_size=1, max_size=3), path=_PATH)
def test_a_directory_globstar_matches_the_directory_and_everything_below(names: list[str], path: str) -> None:
    prefix = "/".join(names)
    index = ActivationIndex([("s", [prefix + "/**"])])
    assert (index.match(path) == ["s"]) is (path == prefix or path.startswith(prefix + "/"))


_SEGMENT = st.sampled_from(["..", ".", "", "a", "b", "repo", "é", "e\u0301", "A"])


@given(segments=st.lists(_SEGMENT, max_size=6), absolute=st.booleans())
def test_project_relative_never_leaves_the_root(segments: list[str], absolute: bool) -> None:
    root = Path("/w/repo")
    raw = ("/" if absolute else "") + "/".join(segments)
    rel = project_relative(raw, root)
    if rel is None:
        return
    assert rel and not rel.startswith("/")
    assert ".." not in rel.split("/") and "" not in rel.split("/")
    joined = raw if absolute else posixpath.join(str(root), raw)
    assert posixpath.join(str(root), rel) == posixpath.normpath(joined)
