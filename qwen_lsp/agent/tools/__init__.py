"""Model-callable tools; each module holds one tool implementing ``qwen_lsp.agent.tool.Tool``."""

from __future__ import annotations

from ..tool import Tool
from .glob import GlobTool
from .grep import GrepTool
from .list_directory import ListDirectoryTool
from .read_file import ReadFileTool


def read_only_tools() -> list[Tool]:
    """The tools that only look at the workspace, in a fixed order.

    The order is part of the ``tools`` block's bytes, which head the prompt
    cache prefix, so it never depends on anything at run time.
    """
    return [ReadFileTool(), ListDirectoryTool(), GlobTool(), GrepTool()]
