"""JSON from peers (LSP clients, the model's tool arguments) with a bound on nesting depth.

``json.loads`` recurses once per ``[``/``{``: 200 KB of ``[`` raises
``RecursionError``, which is no ``ValueError`` and so escaped every caller
that expected bad JSON (one such LSP notification ended the server; a tool
call's arguments failed the whole turn). Values that do parse but nest
hundreds deep break later recursive code instead (``deepcopy``, pydantic,
cattrs). ``loads_bounded`` turns both into ``TooDeep``, a ``ValueError``,
so callers keep one ``except ValueError`` for "not usable JSON".
"""

from __future__ import annotations

import json
from typing import Any


class TooDeep(ValueError):
    """JSON nested deeper than the caller allows (or than the parser can recurse)."""


def deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists/objects more than ``limit`` levels; iterative, so any depth is safe."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def loads_bounded(text: str | bytes, max_depth: int) -> Any:
    """``json.loads`` that raises ``TooDeep`` (a ``ValueError``) past ``max_depth`` levels instead of overflowing."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(f"JSON nested too deeply (the limit is {max_depth} levels)") from None
    if deeper_than(value, max_depth):
        raise TooDeep(f"JSON nested more than {max_depth} levels deep")
    return value
