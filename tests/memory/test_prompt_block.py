"""The system prompt's auto-memory block (``memory/prompt.ts``): variants, tiers, index rendering, load truncation."""

from __future__ import annotations

from pathlib import Path

import pytest

from qwen_lsp.memory.prompt_block import EMPTY_INDEX_TEXT, build_memory_block, truncate_index

PROJECT, USER, TEAM = Path("/home/u/.qwen/projects/-w-app/memory"), Path("/home/u/.qwen/memories"), Path("/w/app/.qwen/team-memory")
WARNING_TAIL = " Only part of it was loaded. Keep index entries to one line under ~200 chars; move detail into topic files."


def test_condensed_when_every_index_is_empty() -> None:
    text = build_memory_block({"project": PROJECT}, {"project": "  \n"})
    assert text.startswith("# auto memory\n\n")
    assert f"You have a persistent, file-based memory system at `{PROJECT}`." in text
    assert "## Memory types" in text and "## Do not save" in text and "## How to save memories" in text
    assert "<types>" not in text  # the full types section is for a non-empty memory
    assert text.endswith(f"## {PROJECT}/MEMORY.md\n\n{EMPTY_INDEX_TEXT}")
    assert "name: {{" in text and "description: {{" in text and "type: {{user, feedback, project, reference}}" in text


def test_full_variant_once_an_index_has_entries() -> None:
    index = "- [No DB mocks](feedback/no-db-mocks.md) — integration tests hit a real database"
    text = build_memory_block({"project": PROJECT}, {"project": index})
    for heading in (
        "## Types of memory",
        "## What NOT to save in memory",
        "## How to save memories",
        "## When to access memories",
        "## Before recommending from memory",
        "## Memory and other forms of persistence",
    ):
        assert f"\n{heading}\n" in text
    assert "<scope>always user (all projects)</scope>" in text
    assert "These exclusions hold even when the user explicitly asks you to save." in text
    assert text.endswith(f"## {PROJECT}/MEMORY.md\n\n{index}")
    assert "## Saving to team memory" not in text


def test_force_full() -> None:
    assert "<types>" in build_memory_block({"project": PROJECT}, {}, force_full=True)


def test_tiers_are_user_project_team_and_counted_in_words() -> None:
    text = build_memory_block({"team": TEAM, "project": PROJECT, "user": USER}, {"project": "- [a](a.md) — b"})
    assert "You have three persistent, file-based memory directories." in text
    u, p, t = text.index("- USER memory"), text.index("- PROJECT memory"), text.index("- TEAM memory")
    assert u < p < t
    assert f"`{USER}`" in text and f"`{TEAM}`" in text
    assert "## Saving to team memory" in text
    iu, ip, it = text.index(f"## {USER}/MEMORY.md"), text.index(f"## {PROJECT}/MEMORY.md"), text.index(f"## {TEAM}/MEMORY.md")
    assert iu < ip < it
    assert text.endswith(f"## {PROJECT}/MEMORY.md\n\n- [a](a.md) — b\n\n## {TEAM}/MEMORY.md\n\n{EMPTY_INDEX_TEXT}")
    two = build_memory_block({"project": PROJECT, "user": USER, "team": None}, {})
    assert "You have two persistent, file-based memory directories." in two and "TEAM" not in two


def test_condensed_with_team_mentions_team_routing() -> None:
    text = build_memory_block({"project": PROJECT, "team": TEAM}, {})
    assert "Never save secrets to TEAM" in text and "<types>" not in text


def test_byte_stable_for_equal_inputs() -> None:
    a = build_memory_block({"project": PROJECT, "user": USER}, {"project": "- [x](x.md) — y", "user": None})
    b = build_memory_block({"user": USER, "project": PROJECT}, {"user": "", "project": "- [x](x.md) — y"})
    assert a == b


def test_the_project_directory_is_required() -> None:
    with pytest.raises(ValueError):
        build_memory_block({"user": USER}, {})


def test_index_under_the_limits_is_only_trimmed() -> None:
    assert truncate_index("\n- a\n- b\n\n") == "- a\n- b"


def test_too_many_lines() -> None:
    index = "\n".join(f"- [m{i}](m{i}.md) — hook" for i in range(250))
    text = truncate_index(index)
    body, warning = text.split("\n\n> WARNING: ")
    assert body.split("\n") == index.split("\n")[:200]
    assert warning == "MEMORY.md is 250 lines (limit: 200)." + WARNING_TAIL


def test_too_many_characters_cuts_at_the_last_line_break() -> None:
    line = "- [" + "t" * 180 + "](x.md) — " + "h" * 300  # ~500 chars a line
    index = "\n".join([line] * 100)
    text = truncate_index(index)
    body, warning = text.split("\n\n> WARNING: ")
    assert len(body) <= 25_000 and body.endswith("h") and index.startswith(body) and index[len(body)] == "\n"
    assert warning == f"MEMORY.md is {len(index) / 1024:.1f} KB (limit: 24.4 KB) — index entries are too long." + WARNING_TAIL


def test_both_limits() -> None:
    index = "\n".join("x" * 200 for _ in range(300))
    warning = truncate_index(index).split("\n\n> WARNING: ")[1]
    assert warning == f"MEMORY.md is 300 lines and {len(index) / 1024:.1f} KB." + WARNING_TAIL


def test_size_counts_utf16_units() -> None:
    index = "😀" * 12_600  # 12,600 characters but 25,200 UTF-16 units
    body, warning = truncate_index(index).split("\n\n> WARNING: ")
    assert body == "😀" * 12_500 and "24.6 KB (limit: 24.4 KB)" in warning


def test_truncation_shows_in_the_block() -> None:
    index = "\n".join(f"- [m{i}](m{i}.md) — hook" for i in range(201))
    assert "> WARNING: MEMORY.md is 201 lines (limit: 200)." in build_memory_block({"project": PROJECT}, {"project": index})
