"""Context core: system prompt, QWEN.md/AGENTS.md layers, @import, rules, environment prelude.

Plain Python (no LSP); the engine owns one :class:`ContextAssembler` per
workspace. See ``docs/context.md`` for the user-facing description and for
what Qwen Code 0.24 sends, which this package reproduces.
"""

from .assembler import ContextAssembler, ContextSettings
from .sections import Section
from .session_context import SessionContext
from .code_regions import find_code_regions
from .discovery import ContextFile, Discovery, discover
from .environment import folder_structure, git_snapshot, startup_reminder, wrap_reminder
from .imports import find_imports, process_imports
from .project_rules_file import MEMORY_SECTION_HEADER, append_to_project_rules
from .prompts import (
    ContextError,
    build_base_prompt,
    system_prompt_suffix,
    tool_call_style,
)
from .rules import ConditionalRules, Rule, parse_rule
from .text import Problem

__all__ = [
    "MEMORY_SECTION_HEADER",
    "ConditionalRules",
    "ContextAssembler",
    "ContextError",
    "ContextFile",
    "ContextSettings",
    "Discovery",
    "Problem",
    "Rule",
    "Section",
    "SessionContext",
    "append_to_project_rules",
    "build_base_prompt",
    "discover",
    "find_code_regions",
    "find_imports",
    "folder_structure",
    "git_snapshot",
    "parse_rule",
    "process_imports",
    "startup_reminder",
    "system_prompt_suffix",
    "tool_call_style",
    "wrap_reminder",
]
