"""Plain-object tests: 0.24.4's window table and normalisation, and which shell commands run without asking."""

from __future__ import annotations

from pathlib import Path

import pytest

from qwen_lsp.shell.analysis import analyse
from qwen_lsp.compaction.windows import DEFAULT_TOKEN_LIMIT, context_window
from qwen_lsp.llm.model_ids import normalize

# Each pair was produced by Qwen Code 0.24.4's own normalize() (tokenLimits.ts) run under node.
NORMALIZED = {
    "Qwen/qwen3-coder-plus-20250722": "qwen3-coder-plus",
    "qwen3-coder-30b-a3b-instruct": "qwen3-coder-30b-a3b-instruct",
    "claude-opus-4.6": "claude-opus-4-6",
    "qwen2.5-coder-7b:7b": "qwen2.5-coder-7b",
    "qwen-max-2025-01-25": "qwen-max-2025-01-25",
    "a-b-2.5": "a-b",
    "x-2.5": "x-2.5",
    "foo-bar-v2.1": "foo-bar",
    "mistral-large-latest": "mistral-large",
    "Qwen3.5-Plus:free": "qwen3.5-plus",
    "qwen3-32b-fp16": "qwen3-32b",
}


@pytest.mark.parametrize(("model", "expected"), sorted(NORMALIZED.items()))
def test_normalize_matches_the_clis(model: str, expected: str) -> None:
    assert normalize(model) == expected


def test_windows_from_the_table_a_configured_size_and_the_default() -> None:
    assert context_window("qwen3-coder-plus", None) == 1_000_000
    assert context_window("Qwen/qwen3-coder-plus-20250722", None) == 1_000_000
    assert context_window("qwen3-coder-30b-a3b-instruct", None) == 262_144
    assert context_window("gpt-4o", None) == 131_072
    assert context_window("scripted-model", None) == DEFAULT_TOKEN_LIMIT == 200_000
    assert context_window(None, None) == 200_000
    assert context_window("qwen3-coder-plus", 300_000) == 300_000


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "notes.txt").write_text("hi\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("key\n")
    (root / "link.txt").symlink_to(outside)
    return root


def is_read_only(command: str, cwd: Path, root: Path) -> bool:
    return analyse(command, cwd, [root]).read_only


@pytest.mark.parametrize(
    "command",
    ["ls", "ls -la src", "cat notes.txt | wc -l", "grep -rn hi .", "head -n 1 notes.txt", "find src -name x", "echo hi", "git status"],
)
def test_read_only_commands_inside_the_workspace(ws: Path, command: str) -> None:
    assert is_read_only(command, ws, ws)


@pytest.mark.parametrize(
    "command",
    [
        "rm notes.txt", "ls; rm notes.txt", "ls && touch x", "cat notes.txt > copy.txt", "ls $(pwd)",
        "cat /etc/passwd", "cat ../secret.txt", "cat link.txt", "grep -R hi .", "rg -L hi", "find -L .", "find . -delete",
        "sort -o out notes.txt", "grep hi *.txt", "cat {/etc/passwd,notes.txt}", "ls ~", "cat notes.txt\nrm x", "FOO=1 ls",
    ],
)
def test_anything_else_asks(ws: Path, command: str) -> None:
    assert not is_read_only(command, ws, ws)
