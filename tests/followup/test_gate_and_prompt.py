"""The speculation gate and the suggestion prompt's parsing, with plain values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qwen_lsp.settings.config import Settings
from qwen_lsp.features.followups.gate import gate
from qwen_lsp.features.followups.glue import speculation_on
from qwen_lsp.features.followups.overlay import Overlay
from qwen_lsp.features.followups.prompt import MAX_MESSAGE_CHARS, excerpt, parse_suggestion, user_message
from qwen_lsp.llm.content import Content


@pytest.fixture
def overlay(tmp_path: Path) -> Overlay:
    (tmp_path / "ws").mkdir()
    return Overlay(tmp_path / "ws", tmp_path / "ov")


@pytest.mark.parametrize("tool", ["read_file", "list_directory", "glob", "grep_search"])
def test_read_tools_run_in_every_mode(overlay: Overlay, tool: str) -> None:
    assert gate(tool, {}, approval_mode="default", overlay=overlay).action == "allow"


def test_writes_go_to_the_overlay_only_when_the_mode_edits_without_asking(overlay: Overlay) -> None:
    args = {"file_path": str(overlay.workspace / "a.py")}
    assert gate("edit", args, approval_mode="auto-edit", overlay=overlay).action == "write"
    assert gate("write_file", args, approval_mode="yolo", overlay=overlay).action == "write"
    for mode in ("default", "plan"):
        verdict = gate("write_file", args, approval_mode=mode, overlay=overlay)
        assert verdict.action == "stop" and mode in verdict.reason


def test_writes_outside_the_workspace_stop(overlay: Overlay) -> None:
    verdict = gate("write_file", {"file_path": "/etc/hosts"}, approval_mode="yolo", overlay=overlay)
    assert verdict.action == "stop" and "outside the workspace" in verdict.reason
    verdict = gate("edit", {"file_path": str(overlay.workspace / ".." / "x")}, approval_mode="yolo", overlay=overlay)
    assert verdict.action == "stop"


@pytest.mark.parametrize("tool", ["run_shell_command", "skill", "save_memory", "mcp__anything"])
def test_everything_else_stops_even_in_yolo(overlay: Overlay, tool: str) -> None:
    verdict = gate(tool, {"command": "ls"}, approval_mode="yolo", overlay=overlay)
    assert verdict.action == "stop" and verdict.reason.startswith(tool)


def answer(text: str) -> str:
    return json.dumps({"suggestion": text})


@pytest.mark.parametrize("text", ["run the tests", "commit this", "yes, continue", "运行测试", "Add a test for parse_args."])
def test_short_user_voiced_suggestions_are_kept(text: str) -> None:
    assert parse_suggestion(answer(f'  "{text}" ')) == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "none",
        "Thanks!",
        "looks good",
        "What about the docs?",
        "I'll run the tests now",
        "Let me check",
        "run the tests. Then commit.",
        "one two three four five six seven eight nine ten eleven twelve thirteen",
        "x" * 101,
        "run\nthe tests",
    ],
)
def test_noise_is_dropped(text: str) -> None:
    assert parse_suggestion(answer(text)) is None


@pytest.mark.parametrize("raw", ["not json", "[]", '{"suggestion": 3}', '{"other": "x"}'])
def test_malformed_answers_are_no_suggestion(raw: str) -> None:
    assert parse_suggestion(raw) is None


def test_the_excerpt_keeps_visible_dialogue_only_and_is_bounded() -> None:
    history: list[Content] = [
        {"role": "user", "parts": [{"text": "<system-reminder>skills</system-reminder>"}, {"text": "fix the bug"}]},
        {"role": "model", "parts": [{"text": "secret reasoning", "thought": True}, {"functionCall": {"name": "read_file", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "FILE DUMP"}}}]},
        {"role": "model", "parts": [{"text": "Fixed. " + "y" * (MAX_MESSAGE_CHARS + 50)}]},
    ]
    text = excerpt(history)
    assert text.startswith("User: fix the bug\n\nAssistant: Fixed.")
    assert "skills" not in text and "secret" not in text and "FILE DUMP" not in text
    assert text.endswith(" [...]") and len(text) < MAX_MESSAGE_CHARS + 100
    assert "<conversation>" in user_message(history)


@pytest.mark.parametrize(
    ("mode", "speculate", "on"),
    [("default", None, False), ("auto-edit", None, False), ("yolo", None, False), ("default", True, True), ("yolo", False, False)],
)
def test_speculation_is_off_unless_set_in_every_mode(mode: str, speculate: bool | None, on: bool) -> None:
    """As Qwen Code 0.24.4's ``ui.enableSpeculation`` (default false): the approval mode does not turn it on."""
    followup = {} if speculate is None else {"speculate": speculate}
    settings = Settings.model_validate({"tools": {"approvalMode": mode}, "followup": followup})
    assert speculation_on(settings) is on
