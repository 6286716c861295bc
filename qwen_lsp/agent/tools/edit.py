"""``edit``: replace exact text in one file (or create a file from an empty ``old_string``).

Name, parameters (``file_path``, ``old_string``, ``new_string``,
``replace_all``) and failure messages follow Qwen Code's edit tool: the old
text must occur exactly once unless ``replace_all`` is set; an empty
``old_string`` creates a file that does not exist yet. Permission to touch
the path is the run's rules' call (see ``writing.py``); the new content is
written through the tool's ``FileWriter`` hook.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from ..tool import ToolContext, ToolResult
from .base import FileTool, Outcome, ToolArgs, ToolInputError, function_declaration
from .writing import MAX_EDIT_FILE_BYTES, FileWriter, atomic_write_text, check_size, target_path


class EditArgs(ToolArgs):
    file_path: str = Field(min_length=1)
    old_string: str
    new_string: str
    replace_all: bool = False


class EditTool(FileTool[EditArgs]):
    name = "edit"
    args_model = EditArgs
    DECLARATION = function_declaration(
        "edit",
        "Replaces text within a file. By default it replaces a single occurrence, which must be unique: "
        "include enough surrounding context in old_string. Set replace_all to change every occurrence. "
        "Read the file first: old_string must match its current text exactly (whitespace and indentation "
        "included). An empty old_string creates a new file whose content is new_string.",
        {
            "properties": {
                "file_path": {"description": "The absolute path to the file to modify. Must start with '/'.", "type": "string"},
                "old_string": {"description": "The exact literal text to replace (empty to create a new file).", "type": "string"},
                "new_string": {"description": "The exact literal text to replace old_string with.", "type": "string"},
                "replace_all": {"description": "Replace every occurrence of old_string (default false).", "type": "boolean"},
            },
            "required": ["file_path", "old_string", "new_string"],
            "type": "object",
        },
    )

    def __init__(self, writer: FileWriter = atomic_write_text) -> None:
        self._writer = writer

    def execute(self, params: EditArgs, ctx: ToolContext) -> Outcome:
        path = target_path(params.file_path)
        if path.is_dir():
            raise ToolInputError(f"Path is a directory, not a file: {path}")
        current = None
        if path.exists():
            if path.stat().st_size > MAX_EDIT_FILE_BYTES:
                raise ToolInputError(f"File size exceeds the 10MB limit: {path}")
            try:
                current = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise ToolInputError(f"Cannot edit {path}: it is not UTF-8 text.") from None
        new_text, count = edited_text(path, current, params)
        try:
            self._writer(path, new_text)
        except ValueError as exc:
            raise ToolInputError(f"Error editing file {path}: {exc}") from None
        message = edit_message(path, count)
        return Outcome(ToolResult(output=message, display=message, extra={"written": str(path)}), touched=[path])


def edited_text(path: Path, current: str | None, params: EditArgs) -> tuple[str, int]:
    """The file's new text and the number of replacements, or ``ToolInputError`` with Qwen Code's messages.

    ``current`` is None when the file does not exist. Shared by the memory
    forks' ``edit`` and the main chat's (which reads an open buffer instead
    of the disk, see ``qwen_lsp/edits``).
    """
    if params.old_string == params.new_string:
        raise ToolInputError("No changes to apply. The old_string and new_string are identical.")
    if current is None:
        if params.old_string:
            raise ToolInputError(f"File not found: {path}. Cannot apply edit. Use an empty old_string to create a new file.")
        new_text, count = params.new_string, 1
    elif not params.old_string:
        raise ToolInputError(f"Failed to edit. Attempted to create a file that already exists: {path}")
    else:
        count = current.count(params.old_string)
        if count == 0:
            raise ToolInputError(f"Failed to edit, could not find the string to replace in {path}.")
        if count > 1 and not params.replace_all:
            raise ToolInputError(
                f"Failed to edit, expected 1 occurrence but found {count} in {path}. "
                "Add context to old_string to make it unique, or set replace_all."
            )
        new_text = current.replace(params.old_string, params.new_string)
    check_size(new_text, "edit")
    return new_text, count


def edit_message(path: Path, count: int) -> str:
    return f"Successfully modified file: {path} ({count} replacement{'s' if count != 1 else ''})."
