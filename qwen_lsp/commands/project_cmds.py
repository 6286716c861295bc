"""``/init`` and ``/skills``: the project's instructions file and its skills.

``/init`` follows Qwen Code 0.24.4's ``initCommand.ts``: when the context file (the first of
``context.fileName``, QWEN.md by default) already has text it asks before going on; it then
leaves an empty file and asks the model to explore the folder with the read-only tools and write
the file — the write goes through the chat's approval like any other (the user sees the diff
and says yes or no). The prompt says the same as 0.24.4's, in our words.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ..files.nofollow_write import write_text_nofollow
from ..files.reading import read_bytes
from ..protocol import CommandResult
from ..skills.report import format_skill_list
from .base import Command, Invocation

_MAX_EXISTING = 1 << 20


def init_prompt(filename: str) -> str:
    """What 0.24.4's ``/init`` asks of the model."""
    return f"""Analyze the current directory and write a {filename} file that will be given to you as instructions in future sessions here.

How to explore:
1. List the files and directories to see the overall structure, and read the README (README.md, README.txt…) if there is one.
2. Read up to about ten of the most telling files (configuration, main sources, documentation), choosing each next file from what you have learned so far.
3. Decide whether this is a code project (package.json, pyproject.toml, requirements.txt, go.mod, Cargo.toml, pom.xml, build.gradle, a src folder…) or something else (documentation, notes, research).

What to write:
- For a code project: an overview of its purpose, main technologies and architecture; how to build, run and test it (from the scripts, Makefile and configuration you read; a TODO placeholder where you found none); the coding, testing and contribution conventions you can infer.
- For anything else: what the directory is for and holds, its key files and what each contains, and how its contents are meant to be used.

Finally write the complete content to the `{filename}` file as well-formatted Markdown."""


def _has_text(path: Path) -> bool:
    """Whether the file has text; a link is not followed (it may lead out of the workspace) and counts as text."""
    try:
        return bool(read_bytes(path, _MAX_EXISTING, follow_links=False).strip())
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return os.path.lexists(path)  # a link, too large or unreadable: still something a user would not want replaced


async def init(inv: Invocation) -> CommandResult:
    workspace = inv.workspace
    filename = workspace.settings.context.filenames()[0]
    target = workspace.root / filename
    if inv.confirmed is None and await asyncio.to_thread(_has_text, target):
        return inv.ask(f"A {filename} file already exists in this directory. Do you want to regenerate it?")
    try:
        await asyncio.to_thread(write_text_nofollow, target, "")
    except OSError as exc:
        return inv.error(f"Failed to create {filename}: {exc.strerror or exc}")
    return await inv.prompt(
        init_prompt(filename), shown=f"Empty {filename} created. Now analyzing the project to populate it.", path=str(target)
    )


async def skills(inv: Invocation) -> CommandResult:
    return inv.done(format_skill_list(inv.workspace.skills))


COMMANDS = (
    Command("init", "Analyzes the project and creates a tailored QWEN.md file.", init, one_shot=True),
    Command("skills", "List the available skills.", skills),
)
