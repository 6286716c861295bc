"""Qwen Code 0.24.4's setting names and the older names of ours that mean the same.

One ``settings.json`` serves both tools, so the CLI's keys are read with
the CLI's meaning; ours stay as aliases for existing files and editors.
Each pair is folded per layer, before the layers are merged: within one
file (or the editor's settings) the CLI's spelling wins when both are
present, and across files the higher layer wins whichever spelling it
used, as any other key. Code reads our name only; ``qwen-lsp doctor``
shows both, each with the file that set it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CLI_ALIASES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("model", "generationConfig", "contextWindowSize"), ("model", "contextWindow")),
    (("context", "autoCompactThreshold"), ("compression", "threshold")),
    (("memory", "enableManagedAutoMemory"), ("memory", "enabled")),
    (("memory", "enableManagedAutoDream"), ("memory", "autoDream")),
    (("memory", "enableAutoSkill"), ("skills", "review", "enabled")),
    (("ui", "enableFollowupSuggestions"), ("followup", "enabled")),
    (("ui", "enableSpeculation"), ("followup", "speculate")),
)
"""``(Qwen Code's key, ours)``: the value of the first is copied onto the second."""


def get_path(tree: Mapping[str, Any], path: tuple[str, ...]) -> tuple[bool, Any]:
    """``(True, value)`` at ``path`` in a nested settings tree, or ``(False, None)`` when any step is missing."""
    node: Any = tree
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def fold_cli_keys(layer: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of one settings layer in which each CLI key present also sets our alias.

    A branch of ours that is not an object (``"skills": true``) is left as
    it is, for validation to report, rather than overwritten.
    """
    out: dict[str, Any] = dict(layer)
    for cli_path, ours in CLI_ALIASES:
        found, value = get_path(layer, cli_path)
        if not found:
            continue
        node = out
        for part in ours[:-1]:
            child = node.get(part)
            if child is None:
                child = {}
            elif not isinstance(child, Mapping):
                break
            node[part] = child = dict(child)
            node = child
        else:
            node[ours[-1]] = value
    return out
