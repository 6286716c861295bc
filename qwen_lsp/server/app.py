"""The pygls server object: state, converter, capability advertisement, error policy.

Handlers live in ``handlers.py``; this module only holds what they share.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, cast

from cattrs import ClassValidationError, transform_error
from lsprotocol import types
from lsprotocol.types import ResponseError
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest, JsonRpcRequestCancelled, JsonRpcServerError
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage, default_converter, lsp_method

from .. import __version__
from ..agent.services import FeatureModule
from ..features.catalog import FEATURES
from ..workspace import Listeners, Workspace
from ..errors import EngineError
from ..llm.tokens import TokenCounter
from ..warmup import Warmup, server_steps
from ..protocol import (
    CLIENT_REQUESTS,
    CONTEXT_STATUS,
    MEMORY_CHANGED,
    SKILL_PROPOSED,
    SKILLS_CHANGED,
    SUGGESTION,
    ContextStatus,
    MemoryChanged,
    SkillProposed,
    SkillsChanged,
    SuggestionNotice,
)
from .approvals import EditorApplier, asker_for
from .configuration import EditorConfiguration
from .selection import selection_reader
from .pygls_internals import InternalsProtocol, install_stop_event
from .stdio import Output, pipes_usable, serve_stdio
from .uris import uri_to_path

log = logging.getLogger(__name__)

SERVER_NOT_INITIALIZED = -32002

def custom_methods(modules: Sequence[FeatureModule]) -> list[str]:
    """The ``qwen/*`` requests served, advertised in ``capabilities.experimental.qwen.methods``: the contract's,
    and any a feature outside it (a test's example feature) answers."""
    methods = [request.method for request in CLIENT_REQUESTS]
    return [*methods, *(r.method for m in modules for r in m.requests if r.method not in methods)]


def raw_params_converter():
    """lsprotocol's converter, but params and results of unknown (``qwen/*``) methods stay plain dicts.

    pygls would otherwise turn them into namedtuples that rename keys and
    serialise back as arrays; we validate the dicts ourselves with the
    models of ``protocol.py`` (the ``qwen/permission`` answer included).
    """
    conv = default_converter()
    conv.register_structure_hook(JsonRPCRequestMessage, lambda obj, cls: cls(**obj))
    conv.register_structure_hook(JsonRPCResponseMessage, lambda obj, cls: cls(**obj))
    conv.register_structure_hook(JsonRPCNotification, lambda obj, cls: cls(**obj))
    return conv


AFTER_SHUTDOWN = JsonRpcInvalidRequest("The server is shutting down: no requests are served after 'shutdown'.")
BEFORE_INITIALIZE = JsonRpcServerError("The server is not initialized yet.", SERVER_NOT_INITIALIZED)
INITIALIZED_TWICE = JsonRpcInvalidRequest("The server is already initialized: 'initialize' is sent once per session.")


class QwenProtocol(InternalsProtocol):
    def structure_message(self, data: dict[str, Any]):
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
                error = self._refusal(data["method"]) or JsonRpcInvalidParams(f"Invalid params for {data['method']}: {detail}")
                self.send_response(data["id"], error=error.to_response_error())
            raise

    exit_code = 0
    """What the process exits with: LSP says 1 for an ``exit`` that no ``shutdown`` preceded."""

    initialize_received = False

    def _refusal(self, method: str) -> JsonRpcException | None:
        """Why a request for ``method`` is refused in this state of the session, if it is."""
        if self.shutdown_requested and method != types.EXIT:
            return AFTER_SHUTDOWN
        if method == types.INITIALIZE:
            return INITIALIZED_TWICE if self.initialize_received else None
        return None if self.initialize_received or method == types.EXIT else BEFORE_INITIALIZE

    def handle_message(self, message: Any) -> None:
        """The session order LSP prescribes, which pygls does not enforce.

        Before ``initialize``: requests get ServerNotInitialized (-32002),
        notifications other than ``exit`` are dropped (pygls ran them, and
        took an early ``shutdown`` so that the real ``initialize`` was then
        refused). A second ``initialize`` and every request after ``shutdown``
        get InvalidRequest (pygls dropped the latter unanswered).
        """
        method = getattr(message, "method", None)
        refusal = None if method is None else self._refusal(method)
        if refusal is not None:
            if getattr(message, "id", None) is not None:
                self.send_response(message.id, error=refusal.to_response_error())
            elif method != types.EXIT:
                log.info("dropped notification %s: %s", method, refusal)
            return
        if method == types.INITIALIZE:
            self.initialize_received = True
        super().handle_message(message)

    def client_error(self, error: ResponseError) -> ResponseError:
        """pygls puts a bug's traceback in ``error.data``; the client gets the message only, the log keeps the rest."""
        if isinstance(error.data, Mapping) and "traceback" in error.data:
            return ResponseError(code=error.code, message=error.message)
        return error

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any):
        """Record the exit code first: pygls's own ``sys.exit`` is swallowed by ``start_io``, so ``serve`` returns this."""
        self.exit_code = 0 if self.shutdown_requested else 1
        yield from super().lsp_exit(*args)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"qwen": {"version": __version__, "methods": custom_methods(cast("QwenLanguageServer", self.owner).modules), "chatEvents": True, "permissionRequests": True}}
        return result


class QwenRequestError(JsonRpcException):
    """A request that failed for a reason the user can act on (bad key, no model, unknown session)."""


CLIENT_ERRORS = (QwenRequestError, JsonRpcInvalidParams, JsonRpcRequestCancelled)
"""Expected failures: logged as one line. Anything else escaping a handler is a bug and keeps its traceback."""


def engine_error(exc: EngineError) -> JsonRpcException:
    if exc.kind == "invalid_params":
        return JsonRpcInvalidParams(f"{exc.param}: {exc.message}" if exc.param else exc.message)
    return QwenRequestError(exc.message, exc.code, data={"kind": exc.kind})


def internal_error_message(exc: BaseException) -> str:
    """What the user sees for a bug: enough to report it; the traceback is in the log."""
    return f"Internal error in qwen-lsp: {type(exc).__name__}: {exc}. The server log has details."


class _OneLineForClientErrors(logging.Filter):
    """pygls logs every failed request with a traceback; ours are ordinary answers, not crashes."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith("Unable to deserialize message"):
            return False  # its traceback is of the client's params; the reader logs the message in one line
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, CLIENT_ERRORS):
            record.msg, record.args, record.exc_info, record.exc_text = "request failed: %s", (exc,), None, None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


logging.getLogger("pygls.protocol.json_rpc").addFilter(_OneLineForClientErrors())


class QwenLanguageServer(LanguageServer):
    protocol: QwenProtocol

    def __init__(self, modules: Sequence[FeatureModule] = FEATURES) -> None:
        self.modules = tuple(modules)
        """The feature list every folder is built with (``features/catalog.py``); ``features.py`` registers their handlers."""
        super().__init__(
            name="qwen-lsp",
            version=__version__,
            protocol_cls=QwenProtocol,
            converter_factory=raw_params_converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.workspaces: dict[Path, Workspace] = {}
        self._opening: dict[Path, asyncio.Event] = {}
        """Folders whose workspace is being built (off the loop), each set once it is ready: a second
        add of one is ignored, and a request for one waits (:meth:`folder_ready`)."""
        self.counter = TokenCounter()
        self.warmup = Warmup(server_steps(self.counter.load))
        """Started by ``create_server``; ``initialize`` is answered once its GIL-bound steps ran (``warmup.py``)."""
        self.configuration = EditorConfiguration()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.pending_settings: asyncio.Future[None] | None = None
        """A ``workspace/configuration`` pull in flight; turns wait for it."""
        self._progress_tasks: set[asyncio.Future[None]] = set()
        self.output = Output()
        """stdout with flow control (``server/stdio.py``); never paused when pygls owns the transport (TCP)."""

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """LSP on stdio through ``server/stdio.py``: resynchronising framing, bounded sizes, non-blocking output."""
        stdin, stdout = stdin or sys.stdin.buffer, stdout or sys.stdout.buffer
        if not pipes_usable(stdin, stdout):
            super().start_io(stdin, stdout)
            return
        stop = threading.Event()
        install_stop_event(self, stop)
        try:
            asyncio.run(serve_stdio(self.protocol, self.output, stop.is_set, stdin, stdout))
        except (KeyboardInterrupt, SystemExit):  # ``exit`` ends the loop with SystemExit, as in pygls
            pass
        finally:
            self.shutdown()

    @property
    def exit_code(self) -> int:
        return self.protocol.exit_code if isinstance(self.protocol, QwenProtocol) else 0

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log instead of pygls's default error popup: background noise must not nag the user."""
        if not isinstance(error, CLIENT_ERRORS):
            log.error("server error (%s): %s", getattr(source, "__name__", source), error)

    # --------------------------------------------------------------- workspaces
    async def open_workspaces(self, roots: list[Path]) -> list[Workspace]:
        """One workspace per folder, each subscribed to its folder's editor settings.

        Each is built on a worker thread (``Workspace.open``): a folder with thousands of
        skills must not stall a chat streaming in another one.
        """
        listeners = Listeners(
            context_status=self.send_context_status,
            skills_changed=self.send_skills_changed,
            memory_changed=self.send_memory_changed,
            skill_proposed=self.send_skill_proposed,
            suggestion=self.send_suggestion,
            progress=self.begin_progress,
            warning=lambda message: self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message)),
        )
        ask = asker_for(self)
        opened = []
        for root in roots or [Path(os.getcwd())]:
            root = root.resolve()
            if root not in self.workspaces and root not in self._opening:
                self._opening[root] = ready = asyncio.Event()
                try:
                    workspace = await Workspace.open(
                        root,
                        counter=self.counter,
                        client_settings=self.configuration.for_folder(root),
                        listeners=listeners,
                        ask=ask,
                        applier=EditorApplier(self),
                        warmup=self.warmup,
                        modules=self.modules,
                    )
                except BaseException:
                    del self._opening[root]
                    ready.set()
                    raise
                workspace.selection_reader = selection_reader(self)
                self.workspaces[root] = workspace
                del self._opening[root]
                ready.set()
                self.configuration.subscribe(root, workspace.apply_client_settings)
                opened.append(workspace)
        return opened

    async def folder_ready(self, uri: str | None) -> None:
        """Wait while the folder holding ``uri`` is still being opened, so its request reaches its own workspace."""
        path = uri_to_path(uri) if uri else None
        if path is None:
            return
        for root, ready in list(self._opening.items()):
            if path == root or root in path.parents:
                await ready.wait()

    def close_workspace(self, root: Path) -> Workspace | None:
        self.configuration.unsubscribe(root.resolve())
        return self.workspaces.pop(root.resolve(), None)

    def workspace_for(self, uri: str | None = None) -> Workspace:
        """The workspace of the workspace folder containing ``uri`` (a folder or file URI)."""
        return self.workspace_for_path(uri_to_path(uri) if uri else None)

    def workspace_for_path(self, path: Path | None) -> Workspace:
        """The workspace of the innermost folder holding ``path`` (already resolved: document sync resolves once), else the first."""
        if not self.workspaces:
            raise JsonRpcServerError("The server is not initialized yet.", SERVER_NOT_INITIALIZED)
        if path is not None:
            best = max((r for r in self.workspaces if path == r or r in path.parents), key=lambda r: len(r.parts), default=None)
            if best is not None:
                return self.workspaces[best]
        return next(iter(self.workspaces.values()))

    # --------------------------------------------------------------- notifications
    def send_context_status(self, status: ContextStatus) -> None:
        self.protocol.notify(CONTEXT_STATUS.method, status.wire())

    def send_skills_changed(self, change: SkillsChanged) -> None:
        self.protocol.notify(SKILLS_CHANGED.method, change.wire())

    def send_memory_changed(self, change: MemoryChanged) -> None:
        self.protocol.notify(MEMORY_CHANGED.method, change.wire())

    def send_skill_proposed(self, proposal: SkillProposed) -> None:
        self.protocol.notify(SKILL_PROPOSED.method, proposal.wire())

    def send_suggestion(self, notice: SuggestionNotice) -> None:
        self.protocol.notify(SUGGESTION.method, notice.wire())

    def begin_progress(self, title: str) -> Callable[[str], None]:
        """Work-done progress for long work (compression); returns ``end(message)``. Silent for clients without it."""
        if not get_capability(self.client_capabilities, "window.work_done_progress", False):
            return lambda _message: None
        token = str(uuid.uuid4())
        started = asyncio.ensure_future(self._start_progress(token, title))

        def end(message: str) -> None:
            async def finish() -> None:
                if await started:
                    self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

            self._progress_tasks.add(task := asyncio.ensure_future(finish()))
            task.add_done_callback(self._progress_tasks.discard)

        return end

    async def _start_progress(self, token: str, title: str) -> bool:
        try:
            await self.work_done_progress.create_async(token)
        except Exception as exc:  # a client may refuse the token; the work goes on without progress
            log.info("window/workDoneProgress/create refused: %s", exc)
            return False
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=False))
        return True


def unwrap_settings(raw: Any) -> dict[str, Any]:
    """The ``qwen`` settings object from initializationOptions / configuration.

    The options *are* the ``qwen`` object (README.md, "Editor settings"); clients that wrap it
    as ``{"qwen": {...}}`` are accepted too.
    """
    if not isinstance(raw, Mapping):
        return {}
    if set(raw) == {"qwen"} and isinstance(raw["qwen"], Mapping):
        return dict(raw["qwen"])
    return dict(raw)
