"""The editor's ``qwen`` settings, per workspace folder, as one object the engines subscribe to.

Three sources feed it: ``initializationOptions`` (the base, for every
folder), ``workspace/configuration`` answers pulled per folder with its
``scopeUri`` (so folders of a multi-root workspace can differ, as VS Code's
resource-scoped settings do), and ``workspace/didChangeConfiguration``
pushes (which carry no scope: they apply to every folder, under what that
folder's pull answered, and the server pulls again after each change so a
folder's own values are never replaced by window-wide ones). Pulled and
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

    def push(self, qwen: Mapping[str, Any], *, pull_follows: bool = False) -> None:
        """A ``didChangeConfiguration`` with settings: one object for every folder, replacing the previous push.

        Each folder's pulled answer stays on top until the next pull replaces it:
        clearing it here gave every folder of a multi-root workspace the window's values.
        With ``pull_follows`` the folders hear of it once, from :meth:`pulled`, rather
        than first with stale pulled values (a needless skills reload each way).
        """
        self._pushed = dict(qwen)
        if not pull_follows:
            self._notify(list(self._subscribers))

    def pulled(self, answers: Mapping[Path, Mapping[str, Any]]) -> None:
        """``workspace/configuration`` answers, one per folder that asked (none when the pull failed); every folder is told."""
        for root, qwen in answers.items():
            self._pulled[root] = dict(qwen)
        self._notify(list(self._subscribers))

    def _notify(self, roots: list[Path]) -> None:
        for root in roots:
            self._subscribers[root](self.for_folder(root))
