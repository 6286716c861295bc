"""The one way a ``qwen/*`` request is handled: parse params, call the engine, map failures.

Every custom request goes through :func:`qwen_request`, so all of them
follow the method table in ``protocol.py`` (params and result models),
validate params the same way (-32602 naming the field), answer an
:class:`~qwen_lsp.errors.EngineError` with its application code and
``data.kind``, turn any other exception into -32603 with a message a person
can report (the traceback goes to the log, once), and serialise the typed
result with its camelCase aliases.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from pygls.exceptions import JsonRpcException, JsonRpcInternalError

from ..errors import EngineError
from ..protocol import CLIENT_REQUESTS, Request, WireResult
from .app import QwenLanguageServer, engine_error, internal_error_message
from .models import parse

log = logging.getLogger(__name__)

P = TypeVar("P", bound=BaseModel)
Handler = Callable[[QwenLanguageServer, P], Awaitable[WireResult]]


_TABLE = {request.method: request for request in CLIENT_REQUESTS}


def qwen_request(server: QwenLanguageServer, method: str, params: type[P]) -> Callable[[Handler[P]], Handler[P]]:
    """Register ``handler`` for ``method``, whose params and result models are those of ``protocol.CLIENT_REQUESTS``."""
    spec = _TABLE.get(method)
    if spec is None or spec.params is not params:
        raise TypeError(f"{method} is not in protocol.CLIENT_REQUESTS with params {params.__name__}")
    return serve(server, spec)


def serve(server: QwenLanguageServer, spec: Request[P, Any]) -> Callable[[Handler[P]], Handler[P]]:
    """Register a handler for one request of the contract (a feature's may come from its own package)."""
    method = spec.method

    def register(handler: Handler[P]) -> Handler[P]:
        @functools.wraps(handler)
        async def run(ls: QwenLanguageServer, raw: Any) -> dict[str, Any]:
            p = parse(raw, spec.params)
            await ls.folder_ready(getattr(p, "workspace_uri", None))  # a folder being added: wait for it
            try:
                result = await handler(ls, p)
            except EngineError as exc:
                raise engine_error(exc) from None
            except JsonRpcException:
                raise
            except Exception as exc:  # a bug must cost one request, never the server
                log.exception("%s failed", method)
                raise JsonRpcInternalError(internal_error_message(exc)) from None
            if not isinstance(result, spec.result):  # the table is the contract the extension is generated from
                log.error("%s answered %s, not %s", method, type(result).__name__, spec.result.__name__)
                raise JsonRpcInternalError(f"Internal error in qwen-lsp: {method} answered the wrong shape. The server log has details.")
            return result.wire()

        server.feature(method)(run)
        return handler

    return register
