"""The editor's ``qwen`` settings, per workspace folder, as one object the engines subscribe to.

Three sources feed it: ``initializationOptions`` (the base, for every
folder), ``workspace/configuration`` answers pulled per folder with its
``scopeUri`` (so folders of a multi-root workspace can differ, as VS Code's
resource-scoped settings do), and ``workspace/didChangeConfiguration``
pushes (which carry no scope and so apply to every folder). Pulled and
pushed values lie over the initialization options, never wiping them, so a
client that sends part of the object keeps the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..settings.config import overlay

Subscriber = Callable[[dict[str, Any]], None]


class EditorConfiguration:
    def __init__(self) -> None:
        self._base: dict[str, Any] = {}
        self._pushed: dict[str, Any] = {}
        self._pulled: dict[Path, dict[str, Any]] = {}
        self._subscribers: dict[Path, Subscriber] = {}

    def for_folder(self, root: Path) -> dict[str, Any]:
        """The settings object in effect for one workspace folder."""
        return overlay(overlay(self._base, self._pushed), self._pulled.get(root, {}))

    def subscribe(self, root: Path, callback: Subscriber) -> None:
        self._subscribers[root] = callback

    def unsubscribe(self, root: Path) -> None:
        self._subscribers.pop(root, None)
        self._pulled.pop(root, None)

    def set_initial(self, options: Mapping[str, Any]) -> None:
        self._base = dict(options)
        self._notify(list(self._subscribers))

    def push(self, qwen: Mapping[str, Any]) -> None:
        """A ``didChangeConfiguration`` with settings: one object for every folder, replacing earlier answers."""
        self._pushed = dict(qwen)
        self._pulled.clear()
        self._notify(list(self._subscribers))

    def pulled(self, answers: Mapping[Path, Mapping[str, Any]]) -> None:
        """``workspace/configuration`` answers, one per folder that asked."""
        for root, qwen in answers.items():
            self._pulled[root] = dict(qwen)
        self._notify([r for r in answers if r in self._subscribers])

    def _notify(self, roots: list[Path]) -> None:
        for root in roots:
            self._subscribers[root](self.for_folder(root))
