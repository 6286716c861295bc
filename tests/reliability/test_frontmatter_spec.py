"""Frontmatter parsing at its bounds (``parseSkillContent``; YAML 1.2 core schema; JavaScript ``String()``).

From surviving mutants of ``qwen_lsp/text/yaml_frontmatter.py`` and the
frontmatter part of ``qwen_lsp/skills/parse.py``: the exact size and
nesting limits, the refusal messages, core-schema numbers (``0o``/``0x``,
``.inf``/``.nan``, integers past a double) and how JavaScript prints them.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from qwen_lsp.skills.model import SkillLevel
from qwen_lsp.skills.parse import SkillParseError, normalize_content, parse_skill, split_frontmatter
from qwen_lsp.text.yaml_frontmatter import (
    MAX_FRONTMATTER_BYTES,
    MAX_NESTING,
    FrontmatterRefused,
    as_js_number,
    js_string,
    load_frontmatter,
)


def value_of(scalar: str) -> object:
    return load_frontmatter(f"v: {scalar}")["v"]


# --- limits -------------------------------------------------------------------------------------


def test_frontmatter_of_exactly_the_size_limit_loads_and_one_byte_more_is_refused() -> None:
    text = "a: " + "x" * (MAX_FRONTMATTER_BYTES - 3)
    assert load_frontmatter(text)["a"] == "x" * (MAX_FRONTMATTER_BYTES - 3)
    with pytest.raises(FrontmatterRefused) as refused:
        load_frontmatter(text + "x")
    assert str(refused.value) == f"frontmatter is {MAX_FRONTMATTER_BYTES + 1:,} bytes; the limit is 256 KiB"


def test_size_is_counted_in_utf8_bytes() -> None:
    with pytest.raises(FrontmatterRefused, match="the limit is 256 KiB"):
        load_frontmatter("a: " + "é" * (MAX_FRONTMATTER_BYTES // 2))


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_nesting_of_exactly_the_limit_loads_and_one_more_is_refused() -> None:
    value = load_frontmatter(nested(MAX_NESTING))
    for _ in range(MAX_NESTING - 1):
        value = value[0]
    assert value == []
    with pytest.raises(FrontmatterRefused) as refused:
        load_frontmatter(nested(MAX_NESTING + 1))
    assert str(refused.value) == f"frontmatter nests deeper than {MAX_NESTING} levels"


def test_nesting_counts_depth_not_the_number_of_collections() -> None:
    siblings = "\n".join(f"k{i}: [1, [2]]" for i in range(MAX_NESTING * 2))
    assert len(load_frontmatter(siblings)) == MAX_NESTING * 2
    # 40 levels, one closed empty list, then 25 more levels: 65 deep at the end.
    deep_after_close = "[" * 40 + "[], " + "[" * 25 + "]" * 25 + "]" * 40
    with pytest.raises(FrontmatterRefused, match="nests deeper"):
        load_frontmatter(deep_after_close)
    load_frontmatter("[" * 40 + "[], " + "[" * 24 + "]" * 24 + "]" * 40)


def test_aliases_are_refused_by_name() -> None:
    with pytest.raises(FrontmatterRefused) as refused:
        load_frontmatter("a: &anchor 1\nb: *anchor\n")
    assert str(refused.value) == "YAML aliases (*anchor) are not allowed in frontmatter"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !!int abc", "frontmatter could not be converted: invalid literal for int() with base 10: 'abc'"),
        ("a: !!float abc", "frontmatter could not be converted: could not convert string to float: 'abc'"),
    ],
)
def test_a_value_that_cannot_be_converted_is_refused_not_raised(text: str, message: str) -> None:
    with pytest.raises(FrontmatterRefused) as refused:
        load_frontmatter(text)
    assert str(refused.value) == message


# --- core-schema numbers, as JavaScript holds them ---------------------------------------------------


@pytest.mark.parametrize(
    ("scalar", "expected"),
    [
        ("0o17", 15),
        ("0x1F", 31),
        ("0xff", 255),
        ("0O17", "0O17"),  # the core schema's prefixes are lower case
        ("0X1F", "0X1F"),
        ("12", 12),
        ("-12", -12),
        ("1_000", "1_000"),
        ("0x" + "F" * 300, math.inf),
        ("0o" + "7" * 400, math.inf),
        ("9" * 400, math.inf),
        ("-" + "9" * 400, -math.inf),
        ("9" * 5000, math.inf),  # past Python's int() digit limit
        ("1.5", 1.5),
        ("1e3", 1000.0),
        (".inf", math.inf),
        ("+.inf", math.inf),
        ("-.Inf", -math.inf),
        (".INF", math.inf),
        ("yes", "yes"),
        ("on", "on"),
        ("2020-01-01", "2020-01-01"),
        ("~", None),
        ("True", True),
    ],
)
def test_core_schema_scalars(scalar: str, expected: object) -> None:
    assert value_of(scalar) == expected


@pytest.mark.parametrize("scalar", [".nan", ".NaN", ".NAN"])
def test_nan_is_nan(scalar: str) -> None:
    value = value_of(scalar)
    assert isinstance(value, float) and math.isnan(value)


def test_as_js_number_overflows_to_a_signed_infinity() -> None:
    assert as_js_number(10**400) == math.inf
    assert as_js_number(-(10**400)) == -math.inf
    assert as_js_number(-5) == -5 and as_js_number(0) == 0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (5, "5"),
        (-5, "-5"),
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (1.0, "1"),
        (-0.0, "0"),
        (1.5, "1.5"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (2.5e22, "2.5e+22"),
        (1.5e-7, "1.5e-7"),
        (1e-10, "1e-10"),
        (-1e-7, "-1e-7"),
        (0.001, "0.001"),
        ([1, None, "a"], "1,,a"),
        ([True, [1, 2.5]], "true,1,2.5"),
        ([], ""),
        ({"a": 1}, "[object Object]"),
        ("text", "text"),
    ],
)
def test_js_string_prints_as_javascript(value: object, expected: str) -> None:
    assert js_string(value) == expected


# --- SKILL.md frontmatter ----------------------------------------------------------------------------


def parse(text: str) -> tuple[object, str]:
    return parse_skill(text, Path("/p/.qwen/skills/s/SKILL.md"), SkillLevel.PROJECT)


def test_normalize_content_drops_a_leading_bom_and_every_cr() -> None:
    assert normalize_content("\ufeffa\r\nb\rc\n") == "a\nb\nc\n"
    assert normalize_content("a\ufeff") == "a\ufeff"
    assert normalize_content("\ufeff\ufeffa") == "\ufeffa"


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("---\nname: x\n---\nbody", ("name: x", "body")),
        ("---\nname: x\n---", ("name: x", "")),
        ("---\n\n---\n", ("", "")),
        ("---\na\n---\n---\nb", ("a", "---\nb")),  # the first closing line ends it
        ("---\na\n----\nb\n---\nc", ("a\n----\nb", "c")),
    ],
)
def test_split_frontmatter(text: str, parts: tuple[str, str]) -> None:
    assert split_frontmatter(text) == parts


@pytest.mark.parametrize("text", ["name: x\n", "--- \nname: x\n---\n", "---\nname: x\n", " ---\nname: x\n---\n", "---name: x\n---\n"])
def test_no_frontmatter_is_the_reference_error(text: str) -> None:
    with pytest.raises(SkillParseError) as error:
        parse(text)
    assert str(error.value) == "Failed to parse skill file: Invalid format: missing YAML frontmatter"


def test_crlf_and_bom_files_parse_like_lf_files() -> None:
    definition, body = parse("\ufeff---\r\nname: s\r\ndescription: d\r\n---\r\n\r\nBody\r\n")
    assert (definition.name, definition.description, body) == ("s", "d", "Body")  # type: ignore[attr-defined]


def test_bad_yaml_names_the_file_line_and_column() -> None:
    with pytest.raises(SkillParseError) as error:
        parse("---\nname: s\ndescription: [unclosed\n---\n")
    message = str(error.value)
    assert message.startswith("Failed to parse skill file: invalid YAML frontmatter at line ")
    # The frontmatter starts on line 2 of the file; the problem is reported where the parser found it.
    assert message == (
        "Failed to parse skill file: invalid YAML frontmatter at line 4, column 1: "
        "did not find expected ',' or ']' (while parsing a flow sequence)"
    )


def test_refused_frontmatter_says_so() -> None:
    with pytest.raises(SkillParseError) as error:
        parse("---\nname: &n s\ndescription: *n\n---\n")
    assert str(error.value) == (
        "Failed to parse skill file: frontmatter refused: YAML aliases (*n) are not allowed in frontmatter"
    )


def test_a_required_field_missing_is_wrapped_with_the_reference_text() -> None:
    with pytest.raises(SkillParseError) as error:
        parse("---\ndescription: d\n---\n")
    assert str(error.value) == 'Failed to parse skill file: Missing "name" in frontmatter'


def test_a_yaml_problem_without_context_has_no_parenthesis() -> None:
    with pytest.raises(SkillParseError) as error:
        parse("---\nname: a: b\ndescription: d\n---\n")
    assert str(error.value) == (
        "Failed to parse skill file: invalid YAML frontmatter at line 2, column 8: mapping values are not allowed in this context"
    )


def test_an_unmarked_yaml_error_is_one_line() -> None:
    with pytest.raises(SkillParseError) as error:
        parse("---\nname: s\ndescription: \x00\n---\n")
    assert str(error.value) == (
        "Failed to parse skill file: invalid YAML frontmatter: unacceptable character #x0000: "
        'control characters are not allowed in "<unicode string>", position 21'
    )
