"""Which tool calls a speculation may run (Qwen Code's ``speculationToolGate``).

A speculation runs in the background, before the user accepted anything,
so nobody can approve a call. Each call is therefore one of:

* ``allow`` — the read-only tools (they see the overlay's texts);
* ``write`` — ``write_file``/``edit`` on a path inside the workspace, when
  the approval mode lets edits run without asking (``auto-edit``, ``yolo``):
  the write goes to the overlay, never to the workspace; a write to
  configuration (``files/protected.py``: ``.git/``, ``.qwen/``,
  ``.vscode/``…) asks in every mode but ``yolo``, so it stops instead;
* ``stop`` — everything else: a write the mode would ask about, a write
  outside the workspace, any shell command (it would run against the real
  workspace, which the overlay cannot contain), and every other tool
  (skills, memory, tools this gate does not know). The speculation stops
  *at* that call: nothing is asked, and accepting the suggestion then runs
  it as a normal turn, where the user is asked as usual.

Qwen Code lets read-only shell commands through; here the shell always
stops a speculation, because a command reads the workspace, not the
overlay, and so could answer with texts the speculation already changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ...files.protected import protected_reason
from .overlay import Overlay, OutsideWorkspace

READ_TOOLS = frozenset({"read_file", "list_directory", "glob", "grep_search"})
WRITE_TOOLS = frozenset({"write_file", "edit"})
EDITS_WITHOUT_ASKING = frozenset({"auto-edit", "yolo"})

Action = Literal["allow", "write", "stop"]


@dataclass(frozen=True)
class Gate:
    action: Action
    reason: str = ""
    """For ``stop``: why, naming the tool (shown to the user as where the speculation stopped)."""


def gate(tool: str, args: Mapping[str, Any], *, approval_mode: str, overlay: Overlay) -> Gate:
    if tool in READ_TOOLS:
        return Gate("allow")
    if tool in WRITE_TOOLS:
        if approval_mode not in EDITS_WITHOUT_ASKING:
            return Gate("stop", f"{tool}: approval mode '{approval_mode}' asks before every edit")
        raw = args.get("file_path")
        if not isinstance(raw, str) or not raw.strip():
            return Gate("allow")  # the tool itself answers a missing path with an error the model reads
        try:
            path = overlay.workspace_path(raw.strip())
        except OutsideWorkspace:
            return Gate("stop", f"{tool}: {raw.strip()[:200]} is outside the workspace")
        if approval_mode != "yolo" and protected_reason(path.relative_to(overlay.workspace).as_posix()):
            return Gate("stop", f"{tool}: {raw.strip()[:200]} is configuration, which asks before every write")
        return Gate("write")
    if tool == "run_shell_command":
        command = args.get("command")
        shown = command.strip()[:200] if isinstance(command, str) else ""
        return Gate("stop", f"run_shell_command: {shown}" if shown else "run_shell_command")
    return Gate("stop", f"{tool[:100]}: not run while speculating")
