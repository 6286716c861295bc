"""Forget step one (Qwen Code's ``memory/forget.ts``): model selection with the substring fallback."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from qwen_lsp.memory.forget_select import (
    FORGET_SCHEMA,
    FORGET_SELECTOR_TIMEOUT_SECONDS,
    Entry,
    parse_entries,
    select_forget_candidates,
)

from .recall_helpers import Selector, doc

MOCKS = doc("no-mocks", title="No DB mocks", description="Integration tests", body="Never mock the database\n\n**Why:** a migration broke prod\n**How to apply:** use the pg fixture", age_days=3)
TERSE = doc("terse", title="Terse", description="Short replies", body="Keep replies short\n\nWhy: the user reads diffs", age_days=1)
LEGACY = doc("legacy", title="Feedback", description="old topic file", body="# Feedback\n\n- Use tabs\n  - Why: team style\n- Mock nothing in tests\n", age_days=9)
USER_MOCKS = doc("no-mocks", scope="user", root="/mem/user", title="User no mocks", body="Do not mock the database either", age_days=2)
DOCS = [MOCKS, TERSE, LEGACY, USER_MOCKS]


def test_entries_in_both_formats() -> None:
    assert parse_entries(MOCKS.body) == [Entry("Never mock the database", "a migration broke prod", "use the pg fixture")]
    assert parse_entries(LEGACY.body) == [Entry("Use tabs", "team style"), Entry("Mock nothing in tests")]
    assert parse_entries("_No entries yet._\n") == []
    assert parse_entries("  spaced   summary  \n**Why**: x") == [Entry("spaced summary", "x")]


async def test_heuristic_substring_over_summary_why_and_how() -> None:
    found = await select_forget_candidates("  Mock   the DATABASE ", DOCS, select=None)
    assert [c.path for c in found] == [USER_MOCKS.path, MOCKS.path]  # each scope newest first, user scope first
    assert found[1].name == "No DB mocks" and found[1].description == "Integration tests"
    assert '"mock the database"' in found[1].reason
    assert [c.path for c in await select_forget_candidates("pg fixture", DOCS, select=None)] == [MOCKS.path]
    assert [c.path for c in await select_forget_candidates("team style", DOCS, select=None)] == [LEGACY.path]
    assert await select_forget_candidates("kubernetes", DOCS, select=None) == []


async def test_an_empty_request_matches_nothing() -> None:
    assert await select_forget_candidates("   ", DOCS, select=None) == []


async def test_heuristic_limit_five_files_shared_between_scopes() -> None:
    project = [doc(f"p{i}", body=f"deploy rule {i}", age_days=i) for i in range(8)]
    user = [doc(f"u{i}", scope="user", root="/mem/user", body=f"deploy rule {i}", age_days=i) for i in range(8)]
    found = await select_forget_candidates("deploy rule", [*project, *user], select=None)
    assert len(found) == 5
    assert sum(1 for c in found if str(c.path).startswith("/mem/user")) == 3  # 2 each, the spare seat to the first scope


async def test_model_selection_by_candidate_id() -> None:
    def pick(call: Mapping[str, Any]) -> str:
        assert "id: project:feedback/legacy.md:1" in call["user"]
        assert "id: user:feedback/no-mocks.md" in call["user"]
        return json.dumps({"selectedCandidateIds": ["project:feedback/terse.md", "project:feedback/legacy.md:1"], "reasoning": "they ask about\n short replies"})

    select = Selector(pick)
    found = await select_forget_candidates("the brevity thing", DOCS, select=select)
    assert [c.path for c in found] == [TERSE.path, LEGACY.path]
    assert found[0].reason == "they ask about short replies"
    (call,) = select.calls
    assert call["json_schema"] == FORGET_SCHEMA and call["timeout"] == FORGET_SELECTOR_TIMEOUT_SECONDS == 8.0
    assert "<user-content>\nthe brevity thing\n</user-content>" in call["user"]
    assert "Return at most 5 candidate ids." in call["user"]


async def test_model_choosing_nothing_is_nothing() -> None:
    select = Selector(lambda _c: json.dumps({"selectedCandidateIds": []}))
    assert await select_forget_candidates("mock the database", DOCS, select=select) == []


async def test_an_unknown_id_falls_back_to_the_substring_match() -> None:
    select = Selector(lambda _c: json.dumps({"selectedCandidateIds": ["project:feedback/ghost.md"]}))
    found = await select_forget_candidates("pg fixture", DOCS, select=select)
    assert [c.path for c in found] == [MOCKS.path]
    assert "appears in" in found[0].reason


async def test_a_hung_model_falls_back_after_the_timeout() -> None:
    async def never(*, system: str, user: str, json_schema: Mapping[str, Any] | None, timeout: float) -> str:
        await asyncio.Event().wait()
        return ""

    found = await select_forget_candidates("pg fixture", DOCS, select=never, selector_timeout=0.05)
    assert [c.path for c in found] == [MOCKS.path]


async def test_cancel_returns_nothing() -> None:
    cancel = asyncio.Event()
    entered = asyncio.Event()

    async def slow(*, system: str, user: str, json_schema: Mapping[str, Any] | None, timeout: float) -> str:
        entered.set()
        await asyncio.sleep(60)
        return ""

    task = asyncio.create_task(select_forget_candidates("pg fixture", DOCS, select=slow, cancel=cancel))
    await entered.wait()
    cancel.set()
    assert await task == []


async def test_the_model_prompt_is_bounded_literal_matches_first() -> None:
    old_match = doc("old-match", body="rotate the staging token", age_days=400)
    filler = [doc(f"f{i}", body=f"unrelated note {i}", age_days=i / 100) for i in range(450)]
    select = Selector(lambda _c: json.dumps({"selectedCandidateIds": []}))
    await select_forget_candidates("staging token", [*filler, old_match], select=select)
    prompt = select.calls[0]["user"]
    assert prompt.count("\nCandidate ") == 400
    assert "id: project:feedback/old-match.md" in prompt  # the oldest, but it matches literally
