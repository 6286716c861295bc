"""Rule frontmatter read the way Qwen Code 0.24 reads it (its ``utils/yaml-parser``).

Whether a rule is baseline (in every system prompt) or conditional (only
once a matching file is touched) depends on what the frontmatter parser
makes of ``paths:``, so an odd frontmatter must give the same answer as in
the CLI. Qwen Code parses with a YAML 1.2 *core schema* parser and, when
that fails or gives something other than a mapping, falls back to a
line-based "simple" parser; ``null`` values are then dropped. PyYAML's
``safe_load`` is YAML 1.1 (``on`` is true, ``2020-01-01`` a date, ``1_000``
a number) and has no fallback, so both differences are handled here:

* :func:`~qwen_lsp.text.yaml_frontmatter.load_frontmatter` (shared with SKILL.md
  parsing, and bounded against YAML bombs) resolves plain scalars by the
  1.2 core schema only;
* :func:`parse_simple` is our reading of the fallback: ``key: value`` lines,
  ``  - item`` lists and one level of ``  key: value`` objects, values typed
  as JavaScript would (``Number(value)``, quoted strings unquoted).

:func:`~qwen_lsp.text.yaml_frontmatter.js_string` is ``String(value)`` for what
either parser produces, because the rule's ``paths`` are ``paths.map(String)``.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from ..text.yaml_frontmatter import FrontmatterRefused, as_js_number, load_frontmatter
from ..text.jstext import js_trim

_JS_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JS_RADIX = {"0x": 16, "0o": 8, "0b": 2}


def js_number(text: str) -> float | int | None:
    """``Number(text)`` for a trimmed, non-empty string, or ``None`` when it is NaN or infinite."""
    radix = _JS_RADIX.get(text[:2].lower())
    if radix is not None:
        try:
            value = as_js_number(int(text[2:], radix))
        except ValueError:
            return None
        return value if math.isfinite(value) else None
    if not _JS_DECIMAL.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _parse_value(value: str) -> Any:
    if value == "true":
        return True
    if value == "false":
        return False
    if value == "null":
        return None
    if value == "":
        return ""
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    number = js_number(value)
    return value if number is None else number


def parse_simple(text: str) -> dict[str, Any]:
    """The line-based fallback: ``key: value``, ``key:`` + ``  - item`` lines, ``key:`` + ``  k: v`` lines."""
    lines = [line for line in text.split("\n") if js_trim(line) and not js_trim(line).startswith("#")]
    result: dict[str, Any] = {}
    current_key = ""
    array: list[Any] = []
    in_array = False
    obj: dict[str, Any] = {}
    in_object = False
    object_key = ""
    for i, line in enumerate(lines):
        if line.startswith("  - "):
            if not in_array:
                in_array, array = True, []
            array.append(_parse_value(js_trim(line[4:])))
            continue
        if in_array:
            result[current_key] = array
            in_array, array, current_key = False, [], ""
        if line.startswith("  ") and in_object:
            key, _, value = js_trim(line).partition(":")
            obj[js_trim(key)] = _parse_value(js_trim(value))
            continue
        if in_object:
            result[object_key] = obj
            in_object, obj, object_key = False, {}, ""
        if ":" not in line:
            continue
        key, _, value = line.partition(":")
        value = js_trim(value)
        if value:
            result[js_trim(key)] = _parse_value(value)
            continue
        current_key = js_trim(key)
        if i + 1 < len(lines):
            following = lines[i + 1]
            if following.startswith("  - "):
                continue
            if following.startswith("  "):
                in_object, object_key, obj, current_key = True, current_key, {}, ""
    if in_array:
        result[current_key] = array
    if in_object:
        result[object_key] = obj
    return result


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value if v is not None]
    return value


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str | None]:
    """The frontmatter mapping (``null`` values dropped) and, if the YAML parser failed, why.

    Raises :class:`FrontmatterRefused` for frontmatter too big, too deep or
    with aliases: the line parser is not asked to make sense of an attack.
    """
    error: str | None = None
    try:
        result = load_frontmatter(text)
    except FrontmatterRefused:
        raise
    except yaml.YAMLError as exc:
        error = str(exc)
        result = None
    if not isinstance(result, dict):
        result = parse_simple(text)
    return _drop_nulls(result), error
