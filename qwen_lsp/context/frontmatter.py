"""Rule frontmatter read the way Qwen Code 0.24 reads it (its ``utils/yaml-parser``).

Whether a rule is baseline (in every system prompt) or conditional (only
once a matching file is touched) depends on what the frontmatter parser
makes of ``paths:``, so an odd frontmatter must give the same answer as in
the CLI. Qwen Code parses with a YAML 1.2 *core schema* parser and, when
that fails or gives something other than a mapping, falls back to a
line-based "simple" parser; ``null`` values are then dropped. PyYAML's
``safe_load`` is YAML 1.1 (``on`` is true, ``2020-01-01`` a date, ``1_000``
a number) and has no fallback, so both differences are handled here:

* :class:`_CoreLoader` is a ``SafeLoader`` that resolves plain scalars by
  the 1.2 core schema only;
* :func:`parse_simple` is our reading of the fallback: ``key: value`` lines,
  ``  - item`` lists and one level of ``  key: value`` objects, values typed
  as JavaScript would (``Number(value)``, quoted strings unquoted).

:func:`js_string` is ``String(value)`` for what either parser produces,
because the rule's ``paths`` are ``paths.map(String)``.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from .text import js_trim


class _CoreLoader(yaml.SafeLoader):
    """``SafeLoader`` with YAML 1.2 core-schema scalar resolution (no yes/no, dates, sexagesimals)."""


_CoreLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+.0123456789"),
    ),
):
    _CoreLoader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _construct_core_int(loader: _CoreLoader, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text)


def _construct_core_float(loader: _CoreLoader, node: yaml.ScalarNode) -> float:
    text = loader.construct_scalar(node).lower()
    if text.endswith(".inf"):
        return -math.inf if text.startswith("-") else math.inf
    if text == ".nan":
        return math.nan
    return float(text)


_CoreLoader.add_constructor("tag:yaml.org,2002:int", _construct_core_int)
_CoreLoader.add_constructor("tag:yaml.org,2002:float", _construct_core_float)

_JS_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JS_RADIX = {"0x": 16, "0o": 8, "0b": 2}


def js_number(text: str) -> float | int | None:
    """``Number(text)`` for a trimmed, non-empty string, or ``None`` when it is NaN or infinite."""
    radix = _JS_RADIX.get(text[:2].lower())
    if radix is not None:
        try:
            return int(text[2:], radix)
        except ValueError:
            return None
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
    """The frontmatter mapping (``null`` values dropped) and, if the YAML parser failed, why."""
    error: str | None = None
    try:
        result = yaml.load(text, Loader=_CoreLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        error = str(exc)
        result = None
    if not isinstance(result, dict):
        result = parse_simple(text)
    return _drop_nulls(result), error


def js_string(value: Any) -> str:
    """JavaScript's ``String(value)`` for the values the parsers above produce."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        text = repr(value)
        if "e" in text:
            mantissa, exp = text.split("e")
            sign = "-" if exp.startswith("-") else "+"
            text = f"{mantissa.removesuffix('.0')}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"
        return text
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)
