"""``list_directory``: the entries directly inside one directory.

Qwen Code 0.24's name and parameters (``path``, ``ignore``; its
``file_filtering_options`` is left out — our minimal ignore rules always
apply). Output as there: directories first, then files, each group by name;
``[DIR] `` marks directories; at most 100 entries, with a count of what was
left out and of ignored entries. ``ignore`` patterns match entry names
(``*`` and ``?`` wildcards, as in Qwen Code).
"""

from __future__ import annotations

from pydantic import Field

from ...text.collation import locale_key
from ..tool import ToolContext, ToolResult
from .base import (
    FileTool,
    Outcome,
    ToolArgs,
    ToolInputError,
    function_declaration,
)
from .ignore import IgnoreRules
from .workspace import resolve_in_workspace

MAX_ENTRIES = 100


class ListDirectoryArgs(ToolArgs):
    path: str = Field(min_length=1)
    ignore: list[str] | None = None


class ListDirectoryTool(FileTool[ListDirectoryArgs]):
    name = "list_directory"
    args_model = ListDirectoryArgs
    DECLARATION = function_declaration(
        "list_directory",
        "Shows the files and subdirectories directly inside one directory of the workspace "
        "(not recursive). Entries can be left out with glob patterns.",
        {
            "properties": {
                "path": {
                    "description": "Absolute path of the directory to list.",
                    "type": "string",
                },
                "ignore": {
                    "description": "Glob patterns of entry names to leave out, e.g. ['*.log'].",
                    "items": {"type": "string"},
                    "type": "array",
                },
            },
            "required": ["path"],
            "type": "object",
        },
    )

    def execute(self, params: ListDirectoryArgs, ctx: ToolContext) -> Outcome:
        from wcmatch import fnmatch  # imported when the tool first runs, not when it is declared

        directory = resolve_in_workspace(params.path, ctx)
        if not directory.exists():
            raise ToolInputError(f"Directory not found: {directory}")
        if not directory.is_dir():
            raise ToolInputError(f"Path is not a directory: {directory}. Use read_file to read a file.")
        rules = IgnoreRules.for_workspace(ctx.workspace_root)
        entries: list[tuple[bool, str]] = []
        ignored_count = 0
        for child in directory.iterdir():
            is_dir = child.is_dir()
            if rules.ignored(child, is_dir=is_dir):
                ignored_count += 1
                continue
            if any(fnmatch.fnmatch(child.name, p, flags=fnmatch.DOTMATCH) for p in params.ignore or ()):
                continue
            entries.append((is_dir, child.name))

        if not entries:
            note = f" ({ignored_count} ignored)" if ignored_count else ""
            return Outcome(
                ToolResult(output=f"Directory {directory} is empty.{note}", display="Directory is empty."),
                touched=[directory],
            )
        entries.sort(key=lambda e: (not e[0], locale_key(e[1])))  # Qwen Code: dirs first, then localeCompare
        shown = entries[:MAX_ENTRIES]
        listing = "\n".join(("[DIR] " if is_dir else "") + name for is_dir, name in shown)
        output = f"Listed {len(entries)} item(s) in {directory}:\n---\n{listing}"
        omitted = len(entries) - len(shown)
        if omitted:
            output += f"\n---\n[{omitted} {'item' if omitted == 1 else 'items'} truncated] ..."
        if ignored_count:
            output += f"\n\n({ignored_count} ignored by .gitignore rules)"
        return Outcome(
            ToolResult(
                output=output,
                display=f"Listed {len(entries)} item(s)" + (" (truncated)" if omitted else ""),
                extra={"path": str(directory), "count": len(entries)},
            ),
            touched=[directory],
        )
