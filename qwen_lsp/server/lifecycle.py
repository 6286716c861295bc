"""Glue for the session's life: ``initialize``, ``initialized``, ``shutdown``, settings and workspace folders."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types
from pygls.capabilities import get_capability

from .app import QwenLanguageServer, unwrap_settings, uri_to_path

log = logging.getLogger(__name__)


def register(server: QwenLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    async def on_initialize(ls: QwenLanguageServer, params: types.InitializeParams) -> None:
        roots = [p for f in (params.workspace_folders or []) if (p := uri_to_path(f.uri)) is not None]
        if not roots and params.root_uri and (p := uri_to_path(params.root_uri)) is not None:
            roots = [p]
        ls.configuration.set_initial(unwrap_settings(params.initialization_options))
        await ls.open_workspaces(roots)
        await ls.warmup.initialized()  # nothing can be waiting for the loop before this answer

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: QwenLanguageServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        if get_capability(ls.client_capabilities, "workspace.configuration", False):
            # Clients such as Neovim keep settings in workspace/configuration rather than
            # initializationOptions. Started before anything awaits, so a turn that
            # arrives meanwhile finds the pull in flight and waits for its answer.
            ls.pending_settings = asyncio.ensure_future(_pull_configuration(ls))
        for workspace in ls.workspaces.values():
            await workspace.start_watching(ls.loop)
        if ls.pending_settings is not None:
            await ls.pending_settings

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: QwenLanguageServer, params: None) -> None:
        await asyncio.gather(*(e.drain() for e in ls.workspaces.values()), return_exceptions=True)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_config(ls: QwenLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        """A change is re-pulled per folder whenever the client can answer: pushed values carry no scope.

        Pushed values still apply (to every folder, under what each folder's pull
        answers), for clients that only push.
        """
        settings = params.settings
        qwen = settings.get("qwen") if isinstance(settings, dict) else None
        can_pull = get_capability(ls.client_capabilities, "workspace.configuration", False)
        if isinstance(qwen, dict):
            ls.configuration.push(qwen, pull_follows=can_pull)
        if can_pull or not isinstance(qwen, dict):
            await _pull(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def on_folders(ls: QwenLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            if (path := uri_to_path(folder.uri)) and (workspace := ls.close_workspace(path)):
                await workspace.drain()
        added = await ls.open_workspaces([p for f in params.event.added if (p := uri_to_path(f.uri)) is not None])
        if ls.loop is not None:
            for workspace in added:
                await workspace.start_watching(ls.loop)
        if added and get_capability(ls.client_capabilities, "workspace.configuration", False):
            await _pull(ls)


async def _pull(ls: QwenLanguageServer) -> None:
    """Pull section ``qwen`` for every folder (``scopeUri``); turns that start meanwhile wait for it."""
    ls.pending_settings = asyncio.ensure_future(_pull_configuration(ls))
    await ls.pending_settings


async def _pull_configuration(ls: QwenLanguageServer) -> None:
    roots = list(ls.workspaces)
    items = [types.ConfigurationItem(scope_uri=root.as_uri(), section="qwen") for root in roots]
    try:
        # Shielded against pygls #621 on cancel.
        answers = await asyncio.shield(ls.workspace_configuration_async(types.ConfigurationParams(items=items)))
    except Exception as exc:  # the client may not implement workspace/configuration
        log.warning("workspace/configuration failed: %s", exc)
        answers = None
    ls.configuration.pulled({root: unwrap_settings(answer) for root, answer in zip(roots, answers or [], strict=False)})  # also applies a push
