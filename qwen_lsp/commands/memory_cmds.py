"""``/remember``, ``/forget``, ``/memory``, ``/dream``: the memory commands, over the workspace's memory manager.

As Qwen Code 0.24.4 (``packages/cli/src/ui/commands/rememberCommand.ts``, ``forgetCommand.ts``):
``/remember`` hands the fact to the model, which saves it with the memory tools into the
directory its type belongs in; ``/forget`` lets the model pick the matching entries. Unlike
0.24.4, ``/forget`` shows what it picked and removes it only when the user confirms (the panel's
two-step forget); ``/memory`` lists the entries instead of opening a dialog; ``/dream`` runs the
consolidation as the background dream does (a forked run) instead of as a turn of the chat.
"""

from __future__ import annotations

from pathlib import Path

from ..protocol import CommandResult
from .base import Command, Invocation
from ..features.memory.feature import MemoryFeature


def remember_prompt(fact: str, *, project_dir: Path | None, user_dir: Path | None) -> str:
    """The request 0.24.4's ``buildManagedRememberPrompt`` makes (``buildBareRememberPrompt`` without managed memory), in our words."""
    if project_dir is None or user_dir is None:
        return f"Please save the following fact to memory (for example, append it to QWEN.md in the project root):\n\n{fact}"
    return (
        "Please save the following to your memory system. Choose the directory by the memory type's scope: "
        f"USER memory at `{user_dir}` for facts that hold across projects, PROJECT memory at `{project_dir}` "
        "for facts about this project only. Pick the most fitting memory type (user, feedback, project or reference) "
        f"for the content:\n\n{fact}"
    )


async def remember(inv: Invocation) -> CommandResult:
    fact = inv.args.strip()
    if not fact:
        return inv.error("Usage: /remember <text to remember>")
    memory = inv.workspace.feature(MemoryFeature).manager
    managed = memory.enabled
    prompt = remember_prompt(
        fact,
        project_dir=memory.store.root("project") if managed else None,
        user_dir=memory.store.root("user") if managed else None,
    )
    return await inv.prompt(prompt, shown=f"Remembering: {fact}")


async def forget(inv: Invocation) -> CommandResult:
    query = inv.args.strip()
    if not query:
        return inv.error("Usage: /forget <memory text to remove>")
    memory = inv.workspace.feature(MemoryFeature).manager
    if inv.confirmed is not None:
        removed = (await memory.forget([Path(p) for p in inv.confirmed])).removed
        if not removed:
            return inv.error("Nothing was removed: the entries are gone already.")
        return inv.done("Forgot:\n" + "\n".join(f"- {p}" for p in removed))
    found = (await memory.forget_candidates(query)).candidates
    if not found:
        return inv.done(f"No managed auto-memory entries matched: {query}")
    listing = "\n".join(f"- {c.name}: {c.description} ({c.path})" for c in found)
    return inv.ask(f"Remove these memory entries?\n{listing}", keep=[c.path for c in found])


async def memory_list(inv: Invocation) -> CommandResult:
    listed = (await inv.workspace.feature(MemoryFeature).manager.list(None)).memories
    if not listed:
        return inv.done("No memories saved yet. Use /remember <text> to save one.")
    lines = [f"- [{m.scope}/{m.type}] {m.name}: {m.description} ({m.age})" for m in listed]
    return inv.done(f"{len(listed)} memories:\n" + "\n".join(lines))


async def dream(inv: Invocation) -> CommandResult:
    report = await inv.workspace.feature(MemoryFeature).manager.dream_now()
    if report.status == "failed":
        return inv.error(f"Failed to process /dream: {report.reason or 'the run failed'}")
    touched = ", ".join(report.touched) or "nothing"
    detail = f" ({report.reason})" if report.reason else ""
    return inv.done(f"Memory consolidation {report.status}{detail}; touched: {touched}.")


COMMANDS = (
    Command("remember", "Save a durable memory to the memory system.", remember, "<text to remember>"),
    Command("forget", "Remove matching entries from managed auto-memory (asks first).", forget, "<memory text to remove>"),
    Command("memory", "List the saved memories.", memory_list),
    Command("dream", "Consolidate managed auto-memory topic files.", dream),
)
