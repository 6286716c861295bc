"""The LSP and ``qwen/*`` handlers: one glue module per area, each registering its own (docs/architecture.md).

No logic lives in any of them: each handler is a few lines that parse params, call the
workspace, shape the result. The features' own requests, notifications and commands are
registered by ``features.py`` from the feature list; a new feature needs nothing here.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..agent.services import FeatureModule
from ..background import prepare_server_process
from ..features.catalog import FEATURES
from . import chats, code_actions, commands, documents, features, lifecycle, skills
from .app import QwenLanguageServer

AREAS = (lifecycle, documents, code_actions, chats, skills, features, commands)


def register(server: QwenLanguageServer) -> None:
    for area in AREAS:
        area.register(server)


def create_server(modules: Sequence[FeatureModule] = FEATURES) -> QwenLanguageServer:
    """The server, with the features of ``modules`` (the feature list; a test adds its example feature)."""
    server = QwenLanguageServer(modules)
    register(server)
    prepare_server_process()
    server.warmup.start()
    return server


__all__ = ["create_server"]
