"""``/clear``, ``/resume``, ``/compress``, ``/recap``, ``/context``: the chat's own commands, over the workspace's sessions and compaction.

Names and messages follow Qwen Code 0.24.4 (``clearCommand.ts``, ``resumeCommand.ts``,
``compressCommand.ts``, ``recapCommand.ts``, ``contextCommand.ts``). Where 0.24.4 opens a
picker (``/resume`` alone) the chats are listed instead, newest first, each with the id that
``/resume <id>`` takes.
"""

from __future__ import annotations

from ..protocol import CommandResult
from ..sessions.recap import generate_recap
from .base import Command, Invocation
from ..features.compaction.feature import CompactionFeature


async def clear(inv: Invocation) -> CommandResult:
    """A new chat; the old one stays on disk (``/resume`` reopens it), as 0.24.4's ``/clear``."""
    session = await inv.workspace.open_session(None)
    return inv.done("Starting a new session.", session_id=session.id)


async def resume(inv: Invocation) -> CommandResult:
    target = inv.args.strip()
    if not target:
        rows = (await inv.workspace.list_sessions()).sessions
        if not rows:
            return inv.done("No saved sessions in this project.")
        listing = "\n".join(f"- {s.session_id}  {s.updated_at}  {s.title}" for s in rows[:50])
        return inv.done(f"Saved sessions (use /resume <id>):\n{listing}")
    resumed = await inv.workspace.resume(target)
    text = f"Resumed session {resumed.session_id} ({len(resumed.messages)} messages)."
    if resumed.recap:
        text += f"\n{resumed.recap}"
    return inv.done(text, session_id=resumed.session_id, resumed=resumed)


async def compress(inv: Invocation) -> CommandResult:
    if not inv.session_id:
        return inv.error("Nothing to compress yet: this chat has no history.")
    result = await inv.workspace.feature(CompactionFeature).compress_chat(inv.session_id, "full")
    if result.status == "compressed":
        return inv.done(
            f"Chat history compressed from {result.tokens_before} to {result.tokens_after} tokens.", session_id=inv.session_id
        )
    if result.status == "noop":
        return inv.done("Nothing to compress: the history is already as small as it can be.", session_id=inv.session_id)
    return inv.error(f"Failed to compress chat history ({result.status}).", session_id=inv.session_id)


async def recap(inv: Invocation) -> CommandResult:
    session = inv.workspace.sessions.get(inv.session_id) if inv.session_id else None
    history = list(session.history) if session is not None else []
    if len(history) < 2:
        return inv.done("Not enough conversation context for a recap yet.", session_id=inv.session_id)
    text = await generate_recap(history, await inv.workspace.model_client())
    return inv.done(text or "Not enough conversation context for a recap yet.", session_id=inv.session_id)


async def context(inv: Invocation) -> CommandResult:
    report = await inv.workspace.context_report(inv.session_id)
    width = max((len(s.name) for s in report.sections), default=0)
    rows = [f"  {s.name.ljust(width)}  {s.tokens:,}" for s in report.sections if s.tokens]
    used = report.total_tokens * 100 / report.window if report.window else 0.0
    head = f"Context: {report.total_tokens:,} of {report.window:,} tokens ({used:.1f}% used)"
    problems = [f"  ! {p.path}: {p.message}" for p in report.problems]
    return inv.done("\n".join([head, *rows, *problems]), session_id=inv.session_id)


COMMANDS = (
    Command("clear", "Clear conversation history and free up context (starts a new chat).", clear, alt_names=("reset", "new"), one_shot=True),
    Command("resume", "Resume a previous session (alone: list them).", resume, "[session id]", alt_names=("continue",)),
    Command("compress", "Compresses the context by replacing it with a summary.", compress, alt_names=("summarize",), one_shot=True),
    Command("recap", "Generate a one-line session recap now.", recap),
    Command("context", "Show how the context window is used.", context, one_shot=True),
)
