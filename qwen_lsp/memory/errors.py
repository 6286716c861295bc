"""The memory store's refusals, each an :class:`~qwen_lsp.errors.EngineError` with a stable ``kind``.

They reach the editor as JSON-RPC errors (``data.kind``) and the model as a
tool error, so each message says what was refused and what to do instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import EngineError


class SecretRefused(EngineError):
    """Team memory would have received a credential (``team-memory-secret-guard.ts``).

    ``labels`` name the rules that fired ("GitHub PAT"); the matched text is
    never kept here, so logging or showing this error cannot leak it.
    """

    def __init__(self, labels: Sequence[str]) -> None:
        self.labels: tuple[str, ...] = tuple(labels)
        super().__init__(
            f"Content contains potential secrets ({', '.join(self.labels)}) and cannot be written to team "
            "memory. Team memory is shared with all repository collaborators. Remove the sensitive content "
            "and try again.",
            kind="secret",
        )


class TeamMemorySecurityError(EngineError):
    """The team-memory root (or a parent of it) is redirected by a symlink out of the repository.

    Distinct from an I/O failure on purpose, as in Qwen Code: an I/O error
    heals on the next write, a redirected root never does and must block
    every write and index rebuild until a person fixes the checkout.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="memory_security")


class OutsideMemoryRoot(EngineError):
    """A path handed to the store is not a memory file it may touch.

    ``kind="invalid_params"`` (``param="path"``): the caller — usually the
    model through a tool — named a wrong path, which it can correct. It
    covers paths outside every scope root, ``MEMORY.md`` (generated, never
    written by hand), the protected ``pinned/`` directory, non-``.md``
    files, and a directory symlink that leads out of the root.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="invalid_params", param="path")
