"""Model-callable tools; each module holds one tool implementing ``qwen_lsp.agent.tool.Tool``."""

from __future__ import annotations

from qwen_lsp.agent.tool import Tool
from qwen_lsp.agent.tools.glob import GlobTool
from qwen_lsp.agent.tools.grep import GrepTool
from qwen_lsp.agent.tools.list_directory import ListDirectoryTool
from qwen_lsp.agent.tools.read_file import ReadFileTool


def read_only_tools() -> list[Tool]:
    """The tools that only look at the workspace, in a fixed order.

    The order is part of the ``tools`` block's bytes, which head the prompt
    cache prefix, so it never depends on anything at run time.
    """
    return [ReadFileTool(), ListDirectoryTool(), GlobTool(), GrepTool()]
