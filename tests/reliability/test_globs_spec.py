"""``paths:`` globs at the edges the first suite left open (``skill-activation.ts``: picomatch, ``dot: true``).

Each case here was a surviving mutant of ``qwen_lsp/matching/globs.py`` (see
``bench/mutation.py``): behaviour a wrong implementation could change
without any test noticing. Expected answers are picomatch's.

``compile_glob`` is memoised; every test starts from an empty cache so the
glob is really compiled under the test (and the mutation run sees which
tests reach which function).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from qwen_lsp.matching.globs import (
    MAX_GLOB_LENGTH,
    MAX_NEGATED_EXTGLOBS,
    ActivationIndex,
    DroppedGlob,
    _literal_keys,
    compile_glob,
    project_relative,
)


@pytest.fixture(autouse=True)
def fresh_glob_cache() -> Iterator[None]:
    compile_glob.cache_clear()
    yield
    compile_glob.cache_clear()


def index_of(*globs: str) -> ActivationIndex:
    return ActivationIndex([("s", list(globs))])


def hits(pattern: str, path: str) -> bool:
    return index_of(pattern).match(path) == ["s"]


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        # `dir/**` matches the directory itself, whatever the name's length, and only that name
        ("docs/**", "docs", True),
        ("docs/**", "docs/a/b.md", True),
        ("docs/**", "doc", False),
        ("docs/**", "docsx/a.md", False),
        ("documentation/**", "documentation", True),
        ("docs/**/**", "docs", True),
        ("a/b/**", "a/b", True),
        ("a/b/**", "a", False),
        # `a*/**` needs a child: picomatch does not let it match `ab`
        ("a*/**", "ab", False),
        ("a*/**", "ab/c", True),
        ("a*/**", "b/c", False),
        # two-dot names: the extension is the last one
        ("**/*.test.ts", "src/a.test.ts", True),
        ("**/*.test.ts", "a.test.ts", True),
        ("**/*.test.ts", "src/a.ts", False),
        ("*.d.ts", "index.d.ts", True),
        ("src/file.d.ts", "src/file.d.ts", True),
        # deeper literal prefixes
        ("src/api/**", "src/api/v1/x.ts", True),
        ("src/api/**", "src/api", True),
        ("src/api/**", "src/apix/v1.ts", False),
        ("src/api/**", "src/x.ts", False),
        ("src/api/v1/*.ts", "src/api/v1/x.ts", True),
        ("src/api/v1/*.ts", "src/api/v2/x.ts", False),
        ("a.b/c/*.ts", "a.b/c/x.ts", True),
        ("a.b/c", "a.b/c", True),
        ("x/a.b/c", "x/a.b/c", True),
        ("x.y/z", "x.y/z", True),
        # negated globs go through the index like any other
        ("!*.md", "a.ts", True),
        ("!*.md", "a.md", False),
        ("!docs/**", "src/a.ts", True),
        ("!docs/**", "docs/a.md", False),
        ("!docs/**", "docs", False),
        ("!{a,b}.ts", "c.ts", True),
        ("!{a,b}.ts", "b.ts", False),
        # extglob-led patterns: the last literal part still selects the bucket
        ("+(a|b).md", "ab.md", True),
        ("+(a|b).md", "c.md", False),
        ("@(src|lib)/*.ts", "lib/x.ts", True),
        ("!(x).ts", "y.ts", True),
        ("!(x).ts", "x.ts", False),
        # an escaped magic character is literal
        ("src/x\\*.ts", "src/x*.ts", True),
        ("src/x\\*.ts", "src/xy.ts", False),
        # a leading `./` is dropped, as picomatch does
        ("./src/*.ts", "src/a.ts", True),
        ("README.md", "README.md", True),
        ("docs/README.md", "docs/README.md", True),
        ("x/a.md", "x/a.md", True),
        ("x/a.md", "x/b.md", False),
        ("src/Makefile", "src/Makefile", True),
    ],
)
def test_index_matches_as_picomatch(pattern: str, path: str, expected: bool) -> None:
    assert hits(pattern, path) is expected


@pytest.mark.parametrize(
    ("alternative", "keys"),
    [
        # The bucket keys are the speed promise: a path tries only the buckets its own prefixes and
        # extension select, so each key must be the most specific one the glob allows.
        ("src/api/**/*.ts", ("src/api", "ts")),
        ("docs/**", ("docs", None)),
        ("**/*.test.ts", ("", "ts")),
        ("*.ts", ("", "ts")),
        ("x/a.md", ("x", "md")),
        ("docs/README.md", ("docs", "md")),
        ("a.b/c", ("a.b", None)),
        ("a/./b/*.ts", ("a", "ts")),
        ("a//b/*.ts", ("a", "ts")),
        ("src/*/x.ts", ("src", "ts")),
        ("+(a|b).md", ("", "md")),
        ("src/x\\*.ts", ("src", "ts")),
        ("src/*.ts*", ("src", None)),
        ("a/b/c/d", ("a/b/c", None)),
    ],
)
def test_bucket_keys_are_the_most_specific_literal_prefix_and_extension(alternative: str, keys: tuple[str, str | None]) -> None:
    assert _literal_keys(alternative) == keys


def test_a_skipped_skill_does_not_hide_another_with_the_same_glob() -> None:
    index = ActivationIndex([("a", ["**/*.ts"]), ("b", ["**/*.ts"]), ("c", ["src/**"])])
    assert index.match("src/x.ts", skip={"a"}.__contains__) == ["b", "c"]


def test_a_skill_already_hit_does_not_hide_later_skills_in_the_same_bucket() -> None:
    index = ActivationIndex([("a", ["*.ts", "x*.ts"]), ("b", ["*.ts"])])
    assert index.match("x.ts") == ["a", "b"]


def test_overlong_glob_is_dropped_with_its_name_pattern_and_picomatch_message() -> None:
    pattern = "a" * (MAX_GLOB_LENGTH + 1)
    index = ActivationIndex([("s", [pattern, "docs/*.md"])])
    assert index.dropped == [
        DroppedGlob("s", pattern, f"Input length: {MAX_GLOB_LENGTH + 1}, exceeds maximum allowed length: {MAX_GLOB_LENGTH}")
    ]
    assert index.match("docs/a.md") == ["s"]


def test_negated_extglobs_past_the_cap_are_dropped_by_name_and_the_rest_still_compile() -> None:
    negated = [f"z{i}/!(x).zz" for i in range(MAX_NEGATED_EXTGLOBS + 1)]
    index = ActivationIndex([("neg", negated + ["docs/*.md"]), ("other", ["src/*.ts"])])
    message = f"more than {MAX_NEGATED_EXTGLOBS} globs with a negated extglob !(...) in one set"
    assert index.dropped == [DroppedGlob("neg", negated[-1], message)]
    assert index.match("docs/a.md") == ["neg"]
    assert index.match(f"z{MAX_NEGATED_EXTGLOBS - 1}/y.zz") == ["neg"]
    assert index.match(f"z{MAX_NEGATED_EXTGLOBS}/y.zz") == []
    assert index.match("src/a.ts") == ["other"]


@pytest.mark.parametrize(
    ("path", "root", "expected"),
    [
        ("src\\a.ts", "/w/repo", "src/a.ts"),  # `\` → `/`, as matchAndConsume does
        ("/w/repo/src/a.ts", "\\w\\repo", "src/a.ts"),
        ("/etc/hosts", "/", "etc/hosts"),  # a root that already ends in `/`
        ("/w/repo/../repo/b.ts", "/w/repo", "b.ts"),
    ],
)
def test_project_relative_separators_and_root(path: str, root: str, expected: str) -> None:
    assert project_relative(path, Path(root)) == expected
