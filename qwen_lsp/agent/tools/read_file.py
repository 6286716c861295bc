"""``read_file``: a text file's lines, paged and capped.

Name and parameters are Qwen Code 0.24's (``file_path``, ``offset``,
``limit``; its PDF-only ``pages`` is left out because we do not read PDFs).
Caps, as in 0.24: a file over 9.9 MB is refused ("File size exceeds the
10MB limit"), at most 1000 lines are shown when no ``limit`` is given, and
at most 25 000 characters in all (the line that crosses it is cut with
``... [truncated]``). On top of that every line is cut at 2000 characters,
the per-line cap of earlier Qwen Code versions, so a minified file still
shows many lines. When anything is left out, the answer starts with
``Showing lines A-B of N total lines.`` and says which ``offset`` continues.
Lines keep their trailing spaces (0.24 trims them; an edit tool that matches
text exactly is better served by the real bytes). The file is streamed
(see ``textfiles.read_window``): memory stays one chunk plus the shown
window, whatever the file's shape. A re-read of an unchanged range is
served from the chat's read cache (``read_cache.py``): same answer, no read.
In the editor a file that is open is read from its buffer, unsaved changes
included, so what the model reads is what ``edit`` will match against.
"""

from __future__ import annotations

from pydantic import Field

from ..tool import ToolContext, ToolResult
from .base import (
    FileTool,
    Outcome,
    ToolArgs,
    ToolInputError,
    function_declaration,
)
from ...files.text import (
    DEFAULT_LINE_LIMIT,
    looks_binary,
    read_head,
    read_window,
    size_refusal,
)
from .workspace import relative_display, resolve_in_workspace

MAX_BUFFER_CHARS = 10 * 1024 * 1024
"""An open buffer larger than this is refused, as a file over the 10 MB read limit is."""


class ReadFileArgs(ToolArgs):
    file_path: str = Field(min_length=1)
    offset: int | None = Field(default=None, ge=0)
    limit: int | None = Field(default=None, gt=0)


class ReadFileTool(FileTool[ReadFileArgs]):
    name = "read_file"
    args_model = ReadFileArgs
    DECLARATION = function_declaration(
        "read_file",
        "Returns the contents of one file in the workspace. Give the file's absolute path "
        "(the project root joined with its relative path). Long files are cut: the answer then "
        "says which lines it shows and how to continue with 'offset' and 'limit'. Binary files "
        "are reported as binary, not shown.",
        {
            "properties": {
                "file_path": {
                    "description": "Absolute path of the file to read, e.g. '/home/user/project/src/main.py'.",
                    "type": "string",
                },
                "offset": {
                    "description": "Optional: 0-based line number to start from, for reading a long file in pages. "
                    "Use together with 'limit'.",
                    "type": ["integer", "null"],
                },
                "limit": {
                    "description": "Optional: how many lines to read. Without it the file is read from 'offset' "
                    "up to a default maximum.",
                    "type": ["integer", "null"],
                },
            },
            "required": ["file_path"],
            "type": "object",
        },
    )

    def execute(self, params: ReadFileArgs, ctx: ToolContext) -> Outcome:
        path = resolve_in_workspace(params.file_path, ctx)
        if not path.exists():
            raise ToolInputError(f"File not found: {path}")
        if path.is_dir():
            raise ToolInputError(f"Path is a directory, not a file: {path}. Use list_directory to see its entries.")
        shown = relative_display(path, ctx)
        start = params.offset or 0
        limit = params.limit or DEFAULT_LINE_LIMIT
        buffer = ctx.applier.buffer_text(path) if ctx.applier is not None else None
        stamp = None
        if buffer is not None:  # open in the editor: what the user sees, unsaved changes included (as edit uses)
            if len(buffer) > MAX_BUFFER_CHARS:
                raise ToolInputError(f"The open buffer of {path} exceeds the 10MB limit. Use grep_search to find the part you need.")
            window = read_window(path, b"", start, limit, count_all=True, text=buffer)
        else:
            too_large = size_refusal(path)
            if too_large:
                raise ToolInputError(
                    f"{too_large}: {path}. Use grep_search to find the part you need, or read a smaller file."
                )
            head = read_head(path)
            if looks_binary(head):
                return Outcome(
                    ToolResult(
                        output=f"Cannot display content of binary file: {shown}",
                        display=f"Skipped binary file: {shown}",
                        extra={"path": str(path), "binary": True},
                    ),
                    touched=[path],
                )
            info = path.stat()
            stamp = (info.st_mtime_ns, info.st_size, start, params.limit)
            cached = ctx.read_cache.get(path, stamp) if ctx.read_cache is not None else None
            if cached is not None:
                return Outcome(cached, touched=[path])
            window = read_window(path, head, start, limit, count_all=True)
        lines = [line.text for line in window.lines]
        total = window.total or 0
        if total and start >= total:
            raise ToolInputError(f"offset {start} is past the end of {path} ({total} lines).")
        end = start + len(lines)
        truncated = window.cut_by_chars or start > 0 or end < total
        body = "\n".join(lines)
        if truncated:
            header = f"Showing lines {start + 1}-{end} of {total} total lines."
            if end < total:
                header += f" To read more, call read_file again with offset: {end}."
            output = f"{header}\n\n---\n\n{body}"
            display = f"Read lines {start + 1}-{end} of {total} from {shown}"
        else:
            output = body if total else f"File {path} is empty."
            display = f"Read {shown}"
        result = ToolResult(
            output=output,
            display=display,
            extra={"path": str(path), "lines": (start + 1, end), "total_lines": total, "truncated": truncated},
        )
        if ctx.read_cache is not None and stamp is not None:
            ctx.read_cache.put(path, stamp, result)
        return Outcome(result, touched=[path])
