"""The one exception type that reaches an adapter: a failure a person can act on.

Cores raise it (or the model client's :class:`~qwen_lsp.llm.errors.LLMError`,
which the engine converts) with a ``kind`` — the stable identifier the
editor keys on (``data.kind`` in the JSON-RPC error) — and a ``message``
shown as is. Anything else escaping a request is a bug.

Each kind carries its JSON-RPC error code (:data:`ERROR_CODES`, the table in
``docs/protocol.md``), so a new kind cannot reach the wire without one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

ModelErrorKind = Literal[
    "config", "auth", "not_found", "connect", "timeout", "stall", "rate_limit", "server", "bad_request", "protocol"
]
"""What failed in a model request (``llm/errors.py``'s ``LLMError.kind``); defined here, at the bottom, so that every
layer can name an error kind without depending on the model client."""

ErrorKind = Literal[
    ModelErrorKind,
    "engine",
    "context",
    "secret",
    "memory_security",
    "conflict",
    "invalid_proposal",
    "memory_busy",
    "invalid_params",
]
"""Every ``data.kind`` an error answer can carry: the model client's kinds and the cores' own."""

INVALID_PARAMS = -32602

ERROR_CODES: Final[Mapping[ErrorKind, int]] = {
    "engine": -31000,
    "config": -31001,
    "auth": -31002,
    "connect": -31003,
    "timeout": -31003,
    "stall": -31003,
    "not_found": -31004,
    "rate_limit": -31005,
    "server": -31006,
    "bad_request": -31007,
    "protocol": -31008,
    "context": -31009,
    "secret": -31010,
    "memory_security": -31011,
    "conflict": -31012,
    "invalid_proposal": -31013,
    "memory_busy": -31014,
    "invalid_params": INVALID_PARAMS,
}
"""The code each kind answers with; ``tests/test_error_codes.py`` checks every kind has one and the docs table agrees.

Application codes lie outside JSON-RPC's reserved range (-32768…-32000, which
holds LSP's -32099…-32000 and -32899…-32800), so a client never mistakes a
rejected key for LSP's ``ServerNotInitialized`` (-32002) or ``UnknownErrorCode``
(-32001). ``invalid_params`` is JSON-RPC's own -32602: the request, not the
work, was at fault.
"""


class EngineError(Exception):
    """A failure the user can act on; ``message`` is shown as is, ``kind`` names it for programs."""

    def __init__(self, message: str, *, kind: ErrorKind = "engine", param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind: ErrorKind = kind
        self.param = param
        """For ``invalid_params``: the request field at fault; each adapter names it in its own words."""

    @property
    def code(self) -> int:
        """The JSON-RPC error code of :attr:`kind`."""
        return ERROR_CODES[self.kind]
