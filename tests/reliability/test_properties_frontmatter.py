"""Property tests of frontmatter parsing (SKILL.md and rules; repository content).

Properties: ``load_frontmatter`` raises nothing but ``yaml.YAMLError``
(``FrontmatterRefused`` included) on any text; ``parse_skill`` raises
nothing but ``SkillParseError``; a frontmatter built from plain mappings
round-trips through ``yaml.safe_dump``; ``split_frontmatter`` agrees with
a line-based reference model; ``normalize_content`` is idempotent and
leaves no ``\\r``; ``js_string`` of an integer agrees with ``str``.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from qwen_lsp.skills.model import SkillLevel
from qwen_lsp.skills.parse import SkillParseError, normalize_content, parse_skill, split_frontmatter
from qwen_lsp.text.yaml_frontmatter import js_string, load_frontmatter

_YAMLISH = st.lists(
    st.sampled_from(["a", ":", " ", "\n", "-", "[", "]", "{", "}", ",", "&x", "*x", "!!int", "!!str", "'", '"', "#", "|",
                     ">", "?", "0x", "0o", "9", ".inf", ".nan", "\t", "\ufeff", "é", "\x00", "%YAML 1.1\n---", "---", "..."]),
    max_size=30,
).map("".join)


@settings(max_examples=300)
@given(text=st.one_of(_YAMLISH, st.text(max_size=60)))
def test_load_frontmatter_raises_only_yaml_errors(text: str) -> None:
    try:
        load_frontmatter(text)
    except yaml.YAMLError:
        pass


@settings(max_examples=200)
@given(front=st.one_of(_YAMLISH, st.text(max_size=40)), body=st.text(max_size=20), crlf=st.booleans())
def test_parse_skill_raises_only_skill_parse_error(front: str, body: str, crlf: bool) -> None:
    text = f"---\n{front}\n---\n{body}"
    if crlf:
        text = text.replace("\n", "\r\n")
    try:
        definition, rest = parse_skill(text, Path("/p/.qwen/skills/s/SKILL.md"), SkillLevel.PROJECT)
    except SkillParseError as exc:
        assert str(exc).startswith("Failed to parse skill file: ")
        return
    assert definition.name and definition.description.strip() and rest == rest.strip()


_KEY = st.text(alphabet=st.characters(min_codepoint=0x61, max_codepoint=0x7A), min_size=1, max_size=8)
# Strings of letters and spaces only: YAML 1.1 (the dumper) and 1.2 (our loader) read other plain
# scalars differently (`0o17`, `1e3`), which is the schema difference, not a round-trip failure.
_WORDS = st.text(alphabet=st.sampled_from("abnoyeslutrfNOYESLUTRF é"), max_size=20)
_SCALAR = st.one_of(_WORDS, st.integers(-(10**15), 10**15), st.booleans(), st.none())
_VALUE = st.recursive(_SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEY, inner, max_size=3), max_leaves=8)


@settings(max_examples=150)
@given(data=st.dictionaries(_KEY, _VALUE, max_size=5))
def test_plain_data_round_trips_through_yaml(data: dict[str, object]) -> None:
    assert load_frontmatter(yaml.safe_dump(data, allow_unicode=True)) == data


def reference_split(text: str) -> tuple[str, str] | None:
    """``parseSkillContent`` by lines: an opening ``---`` line, then the first later line that is exactly ``---``."""
    if not text.startswith("---\n"):
        return None
    lines = text[4:].split("\n")
    for i, line in enumerate(lines):
        if line == "---" and i > 0:
            return "\n".join(lines[:i]), "\n".join(lines[i + 1 :])
    # an empty frontmatter: `---\n---` closes on the very next line only through `\n---` (the \n is the opener's)
    return None


@settings(max_examples=300)
@given(text=st.lists(st.sampled_from(["---", "\n", "a", " ", "-", "b: c"]), max_size=14).map("".join))
def test_split_frontmatter_agrees_with_a_line_model(text: str) -> None:
    expected = reference_split(text)
    try:
        got: tuple[str, str] | None = split_frontmatter(text)
    except SkillParseError:
        got = None
    assert got == expected


@given(text=st.text(alphabet=st.sampled_from("a\r\n\ufeff "), max_size=30))
def test_normalize_content_is_idempotent_and_leaves_no_carriage_return(text: str) -> None:
    once = normalize_content(text)
    assert "\r" not in once
    assert normalize_content(once) == once or once.startswith("\ufeff")


@given(value=st.integers(-(10**30), 10**30))
def test_js_string_of_an_integer_is_its_decimal(value: int) -> None:
    assert js_string(value) == str(value)
