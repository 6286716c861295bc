"""The pygls server object: state, converter, capability advertisement, error policy.

Handlers live in ``handlers.py``; this module only holds what they share.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cattrs import ClassValidationError, transform_error
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcServerError
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)
from pygls.uris import to_fs_path

from .. import __version__
from ..config import overlay
from ..engine import ContextStatus, Engine, EngineError, Listeners, SkillsChanged
from ..llm.tokens import TokenCounter

log = logging.getLogger(__name__)

ERROR_CODES: Mapping[str, int] = {
    "engine": -32000,
    "config": -32001,
    "auth": -32002,
    "connect": -32003,
    "timeout": -32003,
    "stall": -32003,
    "not_found": -32004,
    "rate_limit": -32005,
    "server": -32006,
    "bad_request": -32007,
    "protocol": -32008,
    "context": -32009,
}
"""JSON-RPC codes (server-error range) per :class:`EngineError` kind; ``data.kind`` carries the name."""

CUSTOM_METHODS = (
    "qwen/chat",
    "qwen/context",
    "qwen/sessions/list",
    "qwen/sessions/resume",
    "qwen/sessions/delete",
    "qwen/skills/list",
)


def raw_params_converter():  # type: ignore[no-untyped-def]
    """lsprotocol's converter, but params of unknown (``qwen/*``) methods stay plain dicts.

    pygls would otherwise turn them into namedtuples that rename keys and
    serialise back as arrays; we validate the dicts ourselves with pydantic.
    """
    conv = default_converter()
    conv.register_structure_hook(JsonRPCRequestMessage, lambda obj, cls: cls(**obj))
    conv.register_structure_hook(JsonRPCNotification, lambda obj, cls: cls(**obj))
    return conv


class QwenProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]):  # type: ignore[override]
        """Answer a request whose params cannot be structured, instead of leaving it hanging.

        pygls raises before dispatch and sends nothing, so the client would
        wait forever for a response to, say, a malformed ``textDocument/codeAction``.
        """
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:
                cause = exc.__cause__
                detail = "; ".join(transform_error(cause, path="params")) if isinstance(cause, ClassValidationError) else str(cause or exc)
                error = JsonRpcInvalidParams(f"Invalid params for {data['method']}: {detail}")
                self._send_response(data["id"], error=error.to_response_error())
            raise

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):  # type: ignore[override]
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"qwen": {"version": __version__, "methods": list(CUSTOM_METHODS), "chatEvents": True}}
        return result


def engine_error(exc: EngineError) -> JsonRpcException:
    if exc.kind == "invalid_params":
        return JsonRpcInvalidParams(f"{exc.param}: {exc.message}" if exc.param else exc.message)
    return JsonRpcServerError(exc.message, ERROR_CODES.get(exc.kind, -32000), data={"kind": exc.kind})


class QwenLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            name="qwen-lsp",
            version=__version__,
            protocol_cls=QwenProtocol,
            converter_factory=raw_params_converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.engines: dict[Path, Engine] = {}
        self.counter = TokenCounter()
        self.client_settings: dict[str, Any] = {}
        self.init_options: dict[str, Any] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.pending_settings: asyncio.Future[dict[str, Any]] | None = None
        """A ``workspace/configuration`` pull in flight; turns wait for it."""

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log instead of pygls's default error popup: background noise must not nag the user."""
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)

    # --------------------------------------------------------------- engines
    def open_workspaces(self, roots: list[Path], client_settings: Mapping[str, Any] | None) -> None:
        listeners = Listeners(context_status=self.send_context_status, skills_changed=self.send_skills_changed)
        for root in roots or [Path(os.getcwd())]:
            root = root.resolve()
            if root not in self.engines:
                self.engines[root] = Engine(root, counter=self.counter, client_settings=self.client_settings, listeners=listeners)

    def apply_client_settings(self, qwen: Mapping[str, Any]) -> None:
        """Editor settings changed: every engine uses them from its next turn.

        ``workspace/configuration`` answers and pushed settings lie over the
        ``initializationOptions``, so a client that sends only part of the
        object (or nothing) never wipes what it gave at startup.
        """
        self.client_settings = overlay(self.init_options, qwen)
        for engine in self.engines.values():
            engine.update_client_settings(self.client_settings)

    def close_workspace(self, root: Path) -> Engine | None:
        return self.engines.pop(root.resolve(), None)

    def engine_for(self, uri: str | None = None) -> Engine:
        """The engine of the workspace folder containing ``uri`` (a folder or file URI)."""
        if not self.engines:
            raise JsonRpcServerError("The server is not initialized yet.", -32002)
        if uri:
            path = uri_to_path(uri)
            if path is not None:
                best = max((r for r in self.engines if path == r or r in path.parents), key=lambda r: len(r.parts), default=None)
                if best is not None:
                    return self.engines[best]
        return next(iter(self.engines.values()))

    # --------------------------------------------------------------- notifications
    def send_context_status(self, status: ContextStatus) -> None:
        self.protocol.notify(
            "qwen/contextStatus",
            {
                "sessionId": status.session_id,
                "promptTokens": status.prompt_tokens,
                "window": status.window,
                "percentLeft": status.percent_left,
                "level": status.level,
            },
        )

    def send_skills_changed(self, change: SkillsChanged) -> None:
        payload: dict[str, Any] = {"activated": change.activated, "deactivated": change.deactivated}
        if change.trigger:
            payload["trigger"] = change.trigger
        self.protocol.notify("qwen/skillsChanged", payload)


def uri_to_path(uri: str) -> Path | None:
    fs = to_fs_path(uri)
    return Path(fs).resolve() if fs else None


def unwrap_settings(raw: Any) -> dict[str, Any]:
    """The ``qwen`` settings object from initializationOptions / configuration.

    Design §5 says the options *are* the ``qwen`` object; clients that wrap it
    as ``{"qwen": {...}}`` are accepted too.
    """
    if not isinstance(raw, Mapping):
        return {}
    if set(raw) == {"qwen"} and isinstance(raw["qwen"], Mapping):
        return dict(raw["qwen"])
    return dict(raw)
