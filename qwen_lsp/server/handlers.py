"""The LSP and ``qwen/*`` handlers: one glue module per area, each registering its own (docs/architecture.md).

No logic lives in any of them: each handler is a few lines that parse params, call the
workspace, shape the result. A new area is one module with a ``register(server)`` and one
entry in :data:`AREAS`.
"""

from __future__ import annotations

from ..background import prepare_server_process
from . import chats, code_actions, commands, documents, editor_context, lifecycle, memory, skill_proposals, skills
from .app import QwenLanguageServer

AREAS = (lifecycle, documents, code_actions, memory, chats, skills, skill_proposals, editor_context, commands)


def register(server: QwenLanguageServer) -> None:
    for area in AREAS:
        area.register(server)


def create_server() -> QwenLanguageServer:
    server = QwenLanguageServer()
    register(server)
    prepare_server_process()
    server.warmup.start()
    return server


__all__ = ["create_server"]
