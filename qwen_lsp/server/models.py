"""Params of the ``qwen/*`` methods (their models are in ``protocol.py``), validated once at the boundary.

Custom params reach the server as raw JSON (see ``app.raw_params_converter``);
each handler parses them here. A bad field becomes JSON-RPC -32602 naming the
field, so an editor author sees exactly what to fix.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcInvalidParams

T = TypeVar("T", bound=BaseModel)


def parse(raw: Any, model: type[T]) -> T:
    """Validate raw params; raise -32602 naming the first bad field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams(f"params must be an object, got {type(raw).__name__}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "params"
            problems.append(f"{field}: {err['msg']}")
        raise JsonRpcInvalidParams("Invalid params — " + "; ".join(problems)) from None
