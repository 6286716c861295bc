"""``/export md|json [dir]``: the chat written to a file in the workspace, as Qwen Code 0.24.4's ``exportCommand.ts``.

The file is ``qwen-code-export-<ISO time with : and . as ->.<ext>`` in the workspace folder, or in
the folder named after the format, which must resolve (links followed) inside the workspace; it
is written with mode 0600 and no link followed on the way. The markdown has 0.24.4's layout (a
header with the session id and times, then ``## User`` / ``## Assistant`` sections and
``### Tool:`` rows); the JSON holds the session id, times and the messages as the reopened chat
shows them. 0.24.4's ``html`` and ``jsonl`` are not offered.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from ..errors import EngineError
from ..files.containment import is_within
from ..files.nofollow_write import write_text_nofollow
from ..protocol import CommandResult
from ..sessions.shown import ShownMessage, shown_transcript
from .base import Command, Invocation

FORMATS = ("md", "json")
OUT_OF_WORKSPACE = "Export directory must be within the project working directory."


def export_filename(extension: str, now: dt.datetime) -> str:
    stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z").replace(":", "-").replace(".", "-")
    return f"qwen-code-export-{stamp}.{extension}"


def to_markdown(session_id: str, messages: list[ShownMessage], exported: str, model: str | None) -> str:
    lines = ["# Chat Session Export\n", f"- **Session ID**: `{session_id}`", f"- **Exported**: {exported}", ""]
    if model:
        lines += [f"- **Model**: {model}", ""]
    lines.append("\n---\n")
    for message in messages:
        lines.append("## User\n" if message.role == "user" else "## Assistant\n")
        lines.append(message.text)
        for tool in message.tools:
            lines.append(f"### Tool: {tool.name}")
            lines.append(f"**Status**: {'failed' if tool.is_error else 'completed' if tool.result is not None else 'pending'}\n")
            if tool.args:
                lines.append("```json\n" + json.dumps(tool.args, indent=2, ensure_ascii=False) + "\n```")
        if message.error:
            lines.append(f"> {message.error}")
        lines.append("\n")
    return "\n".join(lines)


def to_json(session_id: str, messages: list[ShownMessage], exported: str, model: str | None) -> str:
    def tools(message: ShownMessage) -> list[dict[str, Any]]:
        return [{"id": t.id, "name": t.name, "args": t.args, "result": t.result, "isError": t.is_error} for t in message.tools]

    data = {
        "sessionId": session_id,
        "metadata": {"exportTime": exported, "model": model},
        "messages": [{"type": m.role, "text": m.text, "toolCalls": tools(m), **({"error": m.error} if m.error else {})} for m in messages],
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


def _target(root: Path, directory: str) -> Path | None:
    """The folder to write into, resolved, or None when it is outside the workspace (0.24.4 checks the same, through links)."""
    wanted = (root / directory) if directory else root
    if not is_within(root, wanted):
        return None
    real = Path(os.path.realpath(wanted))
    return real if real.is_dir() and is_within(root, real) else None


async def export(inv: Invocation) -> CommandResult:
    fmt, _, directory = inv.args.strip().partition(" ")
    fmt = fmt.lower()
    if fmt not in FORMATS:
        return inv.error("Usage: /export md|json [directory] (HTML and JSONL export are not offered by qwen-lsp).")
    if not inv.session_id:
        return inv.error("No active session found to export.")
    workspace = inv.workspace
    try:  # the session file holds every message recorded so far, also those a compression summarised
        loaded = await asyncio.to_thread(workspace.sessions.load, inv.session_id)
    except EngineError:
        return inv.error("No active session found to export.")
    messages = shown_transcript(loaded.conversation or [])
    if not messages:
        return inv.error("No active session found to export.")
    folder = await asyncio.to_thread(_target, workspace.root, directory.strip())
    if folder is None:
        return inv.error(f"{OUT_OF_WORKSPACE} ({directory.strip() or '.'} is not a folder inside {workspace.root})")
    now = dt.datetime.now(dt.timezone.utc)
    exported = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    render = to_markdown if fmt == "md" else to_json
    content = render(loaded.id, messages, exported, workspace.settings.model.name)
    path = folder / export_filename(fmt, now)
    try:
        await asyncio.to_thread(write_text_nofollow, path, content)
        await asyncio.to_thread(os.chmod, path, 0o600)
    except OSError as exc:
        return inv.error(f"Failed to export session: {exc.strerror or exc}")
    shown = os.path.relpath(path, workspace.root)
    name = "markdown" if fmt == "md" else "JSON"
    return inv.done(f"Session exported to {name}: {shown}", path=str(path), session_id=inv.session_id)


COMMANDS = (Command("export", "Export current session message history to a file.", export, "md|json [directory]", one_shot=True),)
