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
import re
from typing import Any

_CUT = "\u0000qwen-lsp:nested-too-deep\u0000"
"""Stands in for a cut subtree while the pruned text is parsed; removed again before anyone sees the value."""
_STRUCTURE = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


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


def loads_pruned(text: str | bytes, max_depth: int) -> tuple[Any, int]:
    """JSON read to ``max_depth`` levels: each deeper object or array is left out; also how many were.

    For what must be read even when part of it is absurd (the editor's
    settings in ``initialize``): a member whose value is cut is removed from
    its object, an element from its array, so the rest keeps its meaning.
    The text is never parsed past the limit, so no depth can overflow: the
    cut is made on the raw text (strings skipped whole), then the shortened
    text is parsed. Raises ``ValueError`` for text that is not JSON.
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    cut_marker = json.dumps(_CUT).encode()
    out: list[bytes] = []
    depth = kept_from = cuts = 0
    cutting = False
    for token in _STRUCTURE.finditer(raw):
        char = token.group()
        if char[:1] == b'"':
            continue
        if char in (b"[", b"{"):
            depth += 1
            if depth == max_depth + 1 and not cutting:
                out += (raw[kept_from : token.start()], cut_marker)
                cutting = True
                cuts += 1
        else:
            if depth == max_depth + 1 and cutting:
                kept_from = token.end()
                cutting = False
            depth -= 1
    if cutting:
        raise ValueError("JSON ends inside a nested value")
    out.append(raw[kept_from:])
    value = json.loads(b"".join(out))
    return _without_cuts(value), cuts


def _without_cuts(value: Any) -> Any:
    """``value`` with every member or element that is the cut marker removed (an explicit stack: no recursion)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in [k for k, v in node.items() if v == _CUT]:
                del node[key]
            stack.extend(v for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            node[:] = [v for v in node if v != _CUT]
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    return value
