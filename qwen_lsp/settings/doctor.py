"""What ``qwen-lsp doctor`` shows about settings: every key, its value and its source.

The keys are read off the settings model itself, so a setting added there
is shown without anyone remembering to list it here. Each source names its
layer first (``system defaults``, ``user``, ``project``, ``system``,
``environment``, ``editor``: ``settings/config.py``), then the file or the
variable, so a user who also runs the Qwen Code CLI sees which of its
layers gave the value both tools use (``model.name``, the sampling
parameters, ...). The base URL is shown
as it is really used: when only an API key is set the engine falls back to
a public default, and ``None (default)`` would hide that.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, SecretStr

from .config import LoadedSettings
from .endpoint import resolve_endpoint


def _leaves(model: BaseModel, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name, info in type(model).model_fields.items():
        key = f"{prefix}{info.alias or name}"
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            yield from _leaves(value, key + ".")
        else:
            yield key, value


def settings_rows(loaded: LoadedSettings) -> list[tuple[str, Any, str]]:
    """``(dotted key, value to show, source)`` for every setting; secrets show as ``'set'``."""
    endpoint = resolve_endpoint(loaded)
    rows: list[tuple[str, Any, str]] = []
    for key, value in _leaves(loaded.settings):
        source = loaded.origin(key)
        if isinstance(value, SecretStr):
            value = "set"
        elif key == "model.baseUrl":
            value = endpoint.base_url
            if endpoint.uses_default_base_url:
                source = "default, because only an API key is set"
        rows.append((key, value, source))
    return rows
