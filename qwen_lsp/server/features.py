"""Glue for the features' own contract entries: each feature names the requests, notifications and
commands it answers (``FeatureModule`` in ``agent/services.py``); this module registers them and routes
each call to the feature of the right folder.

A request whose params name a folder (``workspaceUri``) goes to that folder's feature; one that names
none (a suggestion id) is offered to each folder in turn until one holds it (the others raise
``NotHere``). A notification goes to every folder, each told whether the file it names is its own.
A command goes to the folder of its argument's ``uri``. Params are parsed once, here, with the
contract's models; failures are answered as every ``qwen/*`` request's are (``requests.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..agent.events import EventSink
from ..agent.services import FeatureModule
from ..agent.hooks import NotHere
from ..errors import EngineError
from ..protocol import Command, Notification, Request, WireResult
from ..workspace import Workspace
from .app import QwenLanguageServer, engine_error
from .events import ChatEventStream
from .models import parse
from .requests import serve
from .uris import uri_to_path

log = logging.getLogger(__name__)


class _Call:
    """The :class:`~qwen_lsp.agent.services.Caller` of one call to one folder's feature."""

    def __init__(self, ls: QwenLanguageServer, workspace: Workspace) -> None:
        self._ls = ls
        self._workspace = workspace

    @contextmanager
    def events(self, session_id: str, turn_id: str) -> Iterator[EventSink]:
        with ChatEventStream(self._ls.protocol.notify, session_id, turn_id, output=self._ls.output) as stream:
            yield stream

    def path(self, uri: str) -> Path | None:
        return uri_to_path(uri)

    def owns(self, path: Path) -> bool:
        return self._ls.workspace_for_path(path) is self._workspace


def _handler(workspace: Workspace, method: str) -> Any:
    handler = workspace.handlers.get(method)
    if handler is None:  # every folder is built from the server's feature list: a bug, not the client's doing
        raise EngineError(f"{method} has no handler in the folder {workspace.root}.", kind="engine")
    return handler


def _request(server: QwenLanguageServer, spec: Request[Any, Any]) -> None:
    names_folder = "workspace_uri" in spec.params.model_fields

    @serve(server, spec)
    async def on_request(ls: QwenLanguageServer, p: BaseModel) -> WireResult:
        folders = [ls.workspace_for(getattr(p, "workspace_uri"))] if names_folder else list(ls.workspaces.values()) or [ls.workspace_for(None)]
        for n, workspace in enumerate(folders, 1):
            await workspace.settled()
            try:
                result: WireResult = await _handler(workspace, spec.method)(p, _Call(ls, workspace))
                return result
            except NotHere:
                if n == len(folders):
                    raise
        raise AssertionError("unreachable: the last folder's NotHere is raised")


def _notification(server: QwenLanguageServer, spec: Notification[Any]) -> None:
    @server.feature(spec.method)
    def on_notification(ls: QwenLanguageServer, raw: Any) -> None:
        try:
            p = spec.params.model_validate(raw if isinstance(raw, dict) else {})
        except ValidationError as exc:  # a notification has no answer: the log says why it was ignored
            log.warning("%s ignored: %s", spec.method, exc.errors(include_url=False, include_input=False))
            return
        for workspace in list(ls.workspaces.values()):
            _handler(workspace, spec.method)(p, _Call(ls, workspace))


def _command(server: QwenLanguageServer, spec: Command[Any, Any]) -> None:
    @server.command(spec.name)
    async def on_command(ls: QwenLanguageServer, *args: Any) -> dict[str, Any]:
        argument = parse(args[0] if args else None, spec.argument)
        workspace = ls.workspace_for(getattr(argument, "uri", None))
        try:
            result: WireResult = await _handler(workspace, spec.name)(argument, _Call(ls, workspace))
        except EngineError as exc:
            raise engine_error(exc) from None
        return result.wire()


def register(server: QwenLanguageServer) -> None:
    modules: tuple[FeatureModule, ...] = server.modules
    for module in modules:
        for request in module.requests:
            _request(server, request)
        for notification in module.notifications:
            _notification(server, notification)
        for command in module.commands:
            _command(server, command)
