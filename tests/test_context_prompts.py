"""Base prompt sections, tool-call styles, summarising prompts (Qwen Code's ``core/prompts.ts``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qwen_lsp.compaction.prompts import compression_prompt, project_summary_prompt
from qwen_lsp.context import build_base_prompt, tool_call_style


def test_tool_call_style_by_model_name_and_env() -> None:
    assert tool_call_style("qwen3-coder-plus", {}) == "qwen-coder"
    assert tool_call_style("Qwen2.5-VL-72B", {}) == "qwen-vl"
    assert tool_call_style("my-coder-model", {}) == "qwen-coder"
    assert tool_call_style("gemma_4-it", {}) == "gemma4"
    assert tool_call_style("gpt-4o", {}) == "general"
    assert tool_call_style("x" * 100 + "qwen-coder", {}) == "general"  # the length guard
    assert tool_call_style("x" * 88 + "qwen-coder", {}) == "qwen-coder"
    assert tool_call_style("gpt-4o", {"QWEN_CODE_TOOL_CALL_STYLE": "Qwen-VL"}) == "qwen-vl"
    assert tool_call_style("qwen3-coder", {"QWEN_CODE_TOOL_CALL_STYLE": "bogus"}) == "qwen-coder"


def test_self_deciding_sections(tmp_path: Path) -> None:
    plain = build_base_prompt("m", "headless", str(tmp_path), {})
    assert plain.startswith("You are Qwen Code, a non-interactive CLI agent developed by Alibaba Group")
    assert "# Outside of Sandbox" in plain and "# Executing actions with care" in plain
    assert "# Git Repository" not in plain and "[tool_call:" in plain
    assert plain.endswith(plain.split("Interaction mode reminder: ")[1]) and plain == plain.strip()
    (tmp_path / ".git").mkdir()
    repo = build_base_prompt("qwen3-coder", "editor", str(tmp_path), {"SANDBOX": "sandbox-exec"})
    assert "# macOS Seatbelt" in repo and "# Git Repository" in repo and "<function=" in repo
    assert "# Sandbox\n" in build_base_prompt("m", "editor", str(tmp_path), {"SANDBOX": "docker"})
    order = [repo.index(h) for h in ("# Core Mandates", "# macOS Seatbelt", "# Executing actions", "# Git Repository", "# Examples", "# Final Reminder")]
    assert order == sorted(order)


def test_summarising_prompts() -> None:
    prompt = compression_prompt()
    tags = ["primary_request_and_intent", "key_technical_concepts", "files_and_code_sections", "errors_and_fixes",
            "problem_solving", "all_user_messages", "pending_tasks", "current_work", "next_step"]
    positions = [prompt.index(f"<{t}>") for t in tags]
    assert positions == sorted(positions) and "<analysis>" in prompt and prompt.rstrip().endswith("</state_snapshot>")
    summary = project_summary_prompt()
    for heading in ("# Project Summary", "## Overall Goal", "## Key Knowledge", "## Recent Actions", "## Current Plan"):
        assert heading in summary


QWEN_CODE_ONLY_TOOLS = ("edit", "write_file", "run_shell_command", "todo_write", "ask_user_question", "save_memory")
OURS = ("glob", "grep_search", "list_directory", "read_file", "skill")


def _named(prompt: str, tool: str) -> bool:
    return re.search(rf"(?<![\w-]){tool}(?![\w-])", prompt) is not None


@pytest.mark.parametrize("mode", ["interactive", "headless", "acp", "editor"])
@pytest.mark.parametrize("model", ["gpt-4o", "qwen3-coder-plus", "qwen2.5-vl", "gemma4"])
def test_the_prompt_names_only_the_tools_offered(tmp_path: Path, mode: str, model: str) -> None:
    prompt = build_base_prompt(model, mode, str(tmp_path), {}, in_git=True, tools=OURS)
    assert not [t for t in QWEN_CODE_ONLY_TOOLS if _named(prompt, t)]
    assert _named(prompt, "read_file") and _named(prompt, "grep_search")
    assert "\n\n\n" not in prompt and "<example>" in prompt  # dropped examples leave no gaps


def test_the_prompt_depends_on_the_tool_set_not_its_order(tmp_path: Path) -> None:
    one = build_base_prompt("m", "editor", str(tmp_path), {}, in_git=False, tools=OURS)
    assert build_base_prompt("m", "editor", str(tmp_path), {}, in_git=False, tools=tuple(reversed(OURS))) == one
    without_search = build_base_prompt("m", "editor", str(tmp_path), {}, in_git=False, tools=("read_file",))
    assert without_search != one and not _named(without_search, "grep_search") and not _named(without_search, "glob")


def test_with_qwen_codes_full_tool_set_every_tool_is_named(tmp_path: Path) -> None:
    prompt = build_base_prompt("m", "interactive", str(tmp_path), {}, in_git=False)
    assert all(_named(prompt, t) for t in QWEN_CODE_ONLY_TOOLS)
    assert "[tool_call: edit for file_path" in prompt and "keep a short task list with 'todo_write'" in prompt
