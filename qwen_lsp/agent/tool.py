"""The contract every model-callable tool meets.

Tools are declared once with a JSON schema that never changes while the
server runs: the ``tools`` block is the head of the prompt-cache prefix,
so its bytes must stay identical from request to request (docs/architecture.md).
Dynamic facts (which skills exist, which files are open) travel in
``<system-reminder>`` blocks instead, never in a tool description.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..llm.request_json import FrozenJSON

if TYPE_CHECKING:
    from .applier import Applier
    from .approvals import Approve
    from .tools.read_cache import ReadCache


@dataclass(frozen=True)
class ToolContext:
    """What a tool may know about the turn it runs in."""

    workspace_root: Path
    """The workspace folder (project root) the engine serves."""
    cwd: Path
    """Directory relative paths resolve against (normally the workspace root)."""
    touched: Callable[[Path], None] = lambda _path: None
    """Report a file the tool read or listed, so conditional skills and rules can activate."""
    read_roots: tuple[Path, ...] = ()
    """Directories outside the workspace the read tools may also open (a memory fork's memory roots), resolved
    when the context is made and never again: a symlink planted in their place later cannot lead them elsewhere."""
    call_id: str = ""
    """The id of the call being run; the loop sets it per call (a permission request names it)."""
    chat_id: str = ""
    """The chat the turn belongs to (a background command is the chat's, stopped with it)."""
    approve: Approve | None = None
    """Asks whether a write or a command may run (``agent/approvals.py``); None: nobody can approve, refuse."""
    applier: Applier | None = None
    """How the main chat's write tools change files: through the editor, or on disk in the CLI."""
    read_cache: ReadCache[ToolResult] | None = None
    """The chat's ``read_file`` cache (``agent/tools/read_cache.py``); write tools forget what they change."""
    managed_writes: ManagedWrites | None = None
    """Folders outside the workspace the main chat's write tools may also write (the managed memory folders)."""


@dataclass(frozen=True)
class ManagedWrites:
    """Where, outside the workspace, the main chat may write, and how a write lands there.

    The chat's memory block tells the model to save memories with
    ``write_file`` into the memory folders, as Qwen Code 0.24.4's does; its
    CLI lets the main agent write there (asking as for any write). ``write``
    (raises ``ValueError`` to refuse) goes through the memory store
    — its lock, the team secret guard and the ``MEMORY.md`` rebuild — not
    through the editor. ``roots`` are resolved (symlinks followed).
    """

    roots: tuple[Path, ...]
    write: Callable[[Path, str], Awaitable[None]]


@dataclass
class ToolResult:
    """A tool's answer as the model will see it."""

    output: str
    """Text returned to the model as the function response."""
    is_error: bool = False
    """True when the call failed; the model sees ``output`` as the error text."""
    display: str | None = None
    """Short human summary for the editor (defaults to the first line of ``output``)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Structured data for the engine (never sent to the model)."""


class Tool(Protocol):
    """A model-callable tool with a stable declaration."""

    @property
    def name(self) -> str:
        """The function name the model calls; constant for the life of the process."""
        ...

    def declaration(self) -> dict[str, Any]:
        """The OpenAI ``tools[]`` entry: ``{"type": "function", "function": {...}}``.

        Must return equal values on every call for the life of the process.
        """
        ...

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Execute one call. Bad arguments give ``is_error=True``, never an exception."""
        ...


class DeclarationCache:
    """The declarations of a set of tools, read-only, taken again only when the set changes.

    A tool's declaration is constant for the life of the process (the
    :class:`Tool` contract), but each call of :meth:`Tool.declaration` copies
    it for a caller that might mutate it. Callers that only read it (a
    request body, a token count) share one list per set of tool objects:
    every new chat's first request needs it twice before it leaves, and the
    request encoder keeps the list's JSON (:class:`FrozenJSON`) instead of
    encoding every schema again for each request.
    """

    def __init__(self) -> None:
        self._known: tuple[tuple[Tool, ...], list[dict[str, Any]]] = ((), [])

    def __call__(self, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        known, declarations = self._known
        if len(known) != len(tools) or any(a is not b for a, b in zip(known, tools)):
            declarations = FrozenJSON(t.declaration() for t in tools)
            self._known = (tuple(tools), declarations)
        return declarations
