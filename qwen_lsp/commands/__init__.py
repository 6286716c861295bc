"""The slash commands a user types (``/init``, ``/compress``, ``/model …``), served to every client.

Qwen Code 0.24.4's commands live in its terminal UI; here they live in the server, behind
``qwen/commands/list`` and ``qwen/command`` (docs/protocol.md, "Commands"), so the VS Code panel,
Neovim and any LSP client run the same ones. This package sits between the adapters and the
workspace: each module is one family of commands over the workspace's existing cores (memory,
compaction, sessions, settings), never a second copy of them.
"""

from __future__ import annotations

from .runner import CommandRunner, command_infos

__all__ = ["CommandRunner", "command_infos"]
