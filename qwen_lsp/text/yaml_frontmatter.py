"""YAML frontmatter of SKILL.md and rule files: one loader, Qwen Code's schema, bounded.

Both kinds of file come from the repository, which is untrusted, and both
are parsed on the event loop at start-up and on every change. Plain
``yaml.safe_load`` lets such a file take the server down:

* a billion-laughs document (aliases of aliases) expands to gigabytes:
  7.4 s and 2.7 GB for one SKILL.md in the attack campaign;
* 5,000 nested ``[`` raise ``RecursionError`` in the composer, and a
  5,000-digit integer raises ``ValueError`` (Python's int max-str-digits),
  neither of them a ``YAMLError``, so callers let them escape: every
  ``qwen/chat`` of the workspace failed.

So :func:`load_frontmatter` refuses, with :class:`FrontmatterRefused` (a
``YAMLError``, reported like any bad YAML), a frontmatter over
:data:`MAX_FRONTMATTER_BYTES`, any alias (``*name``), and nesting deeper
than :data:`MAX_NESTING`, all found by a first pass over the parser's
events, which expands nothing and recurses nowhere. Numbers read as
JavaScript reads them: an integer too large for a double is ``±Infinity``,
as in Qwen Code. Qwen Code's ``yaml`` package caps alias expansion instead
(``maxAliasCount``); frontmatter has no use for aliases, so we refuse them.

Schema: Qwen Code parses with the ``yaml`` npm package, YAML 1.2 *core
schema*. PyYAML's ``SafeLoader`` is YAML 1.1 (``on`` is true, ``2020-01-01``
a date, ``1_000`` a number), so :class:`_CoreLoader` resolves plain scalars
by the 1.2 core rules only. It is libyaml's ``CSafeLoader`` when installed
(about nine times faster: thousands of skills are parsed at start-up).
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

MAX_FRONTMATTER_BYTES = 256 * 1024
"""Far above any real frontmatter (a name, a description, a few globs), and cheap to scan."""
MAX_NESTING = 64
"""Collections inside collections; real frontmatter nests two or three deep."""
_DOUBLE_DIGITS = 309  # decimal digits past which no double is finite


class FrontmatterRefused(yaml.YAMLError):
    """Frontmatter not parsed at all because it could exhaust memory, time or the stack."""


_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _CoreLoader(_Base):  # type: ignore[misc,valid-type]
    """Safe loader with YAML 1.2 core-schema scalars (no yes/no, dates, sexagesimals, ``1_000``)."""


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


def as_js_number(value: int) -> int | float:
    """``value`` if a double can hold it, else ``±Infinity`` (what ``Number`` gives in JavaScript)."""
    try:
        float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
    return value


def _construct_core_int(loader: _CoreLoader, node: yaml.ScalarNode) -> int | float:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return as_js_number(int(text[2:], 8))
    if text.startswith("0x"):
        return as_js_number(int(text[2:], 16))
    if len(text) > _DOUBLE_DIGITS:  # int() refuses past 4,300 digits; float() never does
        return float(text)
    return as_js_number(int(text))


def _construct_core_float(loader: _CoreLoader, node: yaml.ScalarNode) -> float:
    text = loader.construct_scalar(node).lower()
    if text.endswith(".inf"):
        return -math.inf if text.startswith("-") else math.inf
    if text == ".nan":
        return math.nan
    return float(text)


_CoreLoader.add_constructor("tag:yaml.org,2002:int", _construct_core_int)
_CoreLoader.add_constructor("tag:yaml.org,2002:float", _construct_core_float)


def load_frontmatter(text: str) -> Any:
    """The YAML value of one frontmatter; ``yaml.YAMLError`` when it is bad or refused."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONTMATTER_BYTES:
        raise FrontmatterRefused(f"frontmatter is {size:,} bytes; the limit is {MAX_FRONTMATTER_BYTES // 1024} KiB")
    _check_shape(text)
    try:
        return yaml.load(text, Loader=_CoreLoader)  # noqa: S506 - a SafeLoader subclass
    except (ValueError, OverflowError, RecursionError) as exc:  # belt and braces: _check_shape should prevent them
        raise FrontmatterRefused(f"frontmatter could not be converted: {exc}") from None


def _check_shape(text: str) -> None:
    """Refuse aliases and deep nesting from the event stream, before anything is built."""
    depth = 0
    for event in yaml.parse(text, Loader=_CoreLoader):
        if isinstance(event, yaml.AliasEvent):
            raise FrontmatterRefused(f"YAML aliases (*{event.anchor}) are not allowed in frontmatter")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_NESTING:
                raise FrontmatterRefused(f"frontmatter nests deeper than {MAX_NESTING} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def js_string(value: Any) -> str:
    """JavaScript's ``String(value)`` for the values frontmatter parsing produces."""
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
        if "e" in text:  # Python writes 1.5e-07 where JavaScript writes 1.5e-7 (never a `.0` mantissa, never e+00)
            mantissa, exp = text.split("e")
            sign = "-" if exp.startswith("-") else "+"
            text = f"{mantissa}e{sign}{exp.lstrip('+-').lstrip('0')}"
        return text
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)
