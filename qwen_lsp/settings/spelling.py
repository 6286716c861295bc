"""One spelling per setting, fixed before anything screens a settings layer (docs/security.md, "Settings trust").

The settings models accept a key under its field name *and* its alias
(``populate_by_name``): ``model.base_url`` and ``model.baseUrl`` both fill
the same field. A screen that looks for ``baseUrl`` therefore misses
``base_url``, and the model layer then uses it. So every layer is rewritten
to the alias spelling first, walking the same models the settings are
validated with (new fields are covered without a list to keep up to date);
the trust rules and validation then see exactly one spelling.

What is not one of the two accepted spellings is left for ``extra="ignore"``
to drop, and the near misses a reader would take for a setting — another
case (``BaseUrl``), dashes or underscores (``base-url``), a dotted flat key
(``"model.baseUrl": …``) — are dropped here with a warning, so
``qwen-lsp doctor`` says why they had no effect. When a key appears under
both spellings, the alias wins, as in pydantic, and the other is reported.
Duplicate keys inside one JSON object never reach this point: ``json.loads``
keeps the last, as ``JSON.parse`` does in Qwen Code, and the screen and the
model see that same value.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

_MAX_DEPTH = 16  # the models nest four deep; deeper user data is passed on unwalked for validation to judge


def canonical_keys(model: type[BaseModel], layer: Mapping[str, Any], source: str, problems: list[str]) -> dict[str, Any]:
    """``layer`` with every key in its alias spelling and the near misses dropped, each reported."""
    return _walk(model, layer, source, problems, "", 0)


def _walk(model: type[BaseModel], data: Mapping[str, Any], source: str, problems: list[str], prefix: str, depth: int) -> dict[str, Any]:
    spellings: dict[str, str] = {}
    nested: dict[str, type[BaseModel]] = {}
    for name, info in model.model_fields.items():
        canon = info.alias or name
        spellings[name] = spellings[canon] = canon
        sub = _model_in(info.annotation)
        if sub is not None:
            nested[canon] = sub
    squashed = {_squash(k): v for k, v in spellings.items()}
    out: dict[str, Any] = {}
    for key, value in data.items():
        known = spellings.get(key)
        if known is None:
            guess = squashed.get(_squash(key))
            if "." in key or guess is not None:
                hint = f"write it as {prefix}{guess}" if guess else "settings are nested objects, not dotted keys"
                problems.append(f"{source}: {prefix}{key} ignored: not a setting name; {hint}")
            else:
                out[key] = value  # not ours (another tool's key): validation ignores it
            continue
        canon = known
        if canon != key and canon in data:
            problems.append(f"{source}: {prefix}{key} ignored: {prefix}{canon} is set too and wins")
            continue
        sub_model = nested.get(canon)
        if sub_model is not None and isinstance(value, Mapping) and depth < _MAX_DEPTH:
            value = _walk(sub_model, value, source, problems, f"{prefix}{canon}.", depth + 1)
        out[canon] = value
    return out


def _squash(key: str) -> str:
    return "".join(c for c in key.casefold() if c not in "_-. ")


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The settings model a field holds (``TimeoutSettings`` or ``TimeoutSettings | None``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None
