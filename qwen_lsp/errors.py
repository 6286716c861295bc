"""The one exception type that reaches an adapter: a failure a person can act on.

Cores raise it (or the model client's :class:`~qwen_lsp.llm.errors.LLMError`,
which the engine converts) with a ``kind`` — the stable identifier the
editor keys on (``data.kind`` in the JSON-RPC error) — and a ``message``
shown as is. Anything else escaping a request is a bug.
"""

from __future__ import annotations


class EngineError(Exception):
    """A failure the user can act on; ``message`` is shown as is, ``kind`` names it for programs."""

    def __init__(self, message: str, *, kind: str = "engine", param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.param = param
        """For ``invalid_params``: the request field at fault; each adapter names it in its own words."""
