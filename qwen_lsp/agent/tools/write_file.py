"""``write_file``: create or overwrite one file with the given content.

Name and parameters are Qwen Code's (``file_path``, ``content``), as are
the success messages. Which paths may be written is decided by the run's
permission rules, not here (see ``writing.py``); the write goes through
the ``FileWriter`` hook the tool was built with.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from ..tool import ToolContext, ToolResult
from .base import FileTool, Outcome, ToolArgs, ToolInputError, function_declaration
from .writing import FileWriter, atomic_write_text, check_size, target_path


class WriteFileArgs(ToolArgs):
    file_path: str = Field(min_length=1)
    content: str


class WriteFileTool(FileTool[WriteFileArgs]):
    name = "write_file"
    args_model = WriteFileArgs
    DECLARATION = function_declaration(
        "write_file",
        "Writes content to a specified file in the local filesystem. Creates the file (and its parent "
        "directories) if it does not exist, and replaces its whole content if it does.",
        {
            "properties": {
                "file_path": {
                    "description": "The absolute path to the file to write to (e.g., '/home/user/project/file.txt'). Relative paths are not supported.",
                    "type": "string",
                },
                "content": {"description": "The content to write to the file.", "type": "string"},
            },
            "required": ["file_path", "content"],
            "type": "object",
        },
    )

    def __init__(self, writer: FileWriter = atomic_write_text) -> None:
        self._writer = writer

    def execute(self, params: WriteFileArgs, ctx: ToolContext) -> Outcome:
        path = target_path(params.file_path)
        check_size(params.content, self.name)
        if path.is_dir():
            raise ToolInputError(f"Path is a directory, not a file: {path}")
        existed = path.exists()
        try:
            self._writer(path, params.content)
        except ValueError as exc:
            raise ToolInputError(f"Error writing to file {path}: {exc}") from None
        message = write_message(path, existed)
        return Outcome(ToolResult(output=message, display=message, extra={"written": str(path)}), touched=[path])


def write_message(path: Path, existed: bool) -> str:
    return f"Successfully overwrote file: {path}." if existed else f"Successfully created and wrote to new file: {path}."
