"""Recall's flow (Qwen Code's ``recall.ts``): model first, heuristic on any failure, nothing on cancel."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest

from qwen_lsp.memory.recall import (
    MAX_MANIFEST_BYTES,
    NOTHING,
    SELECTOR_SCHEMA,
    SELECTOR_TIMEOUT_SECONDS,
    SideQuery,
    is_active_tool_noise,
    iso_time,
    manifest,
    recall,
    render_relevant_memory,
    tool_aliases,
)

from .recall_helpers import DAY, NOW, Selector, doc

DEPLOY = doc("deploy", title="Deploy checklist", description="Steps before a production deploy", body="Run the smoke tests.")
TESTS = doc("tests", title="No database mocks", description="Integration tests hit a real database", body="Use the pg fixture.")
ROLE = doc("role", type="user", scope="user", title="Backend engineer", description="Go background", root="/mem/user")
DOCS = [DEPLOY, TESTS, ROLE]


def answer_paths(*docs: Any) -> Selector:
    return Selector(lambda _call: json.dumps({"selected_memories": [str(d.path) for d in docs]}))


async def test_model_selection_is_used_in_model_order() -> None:
    select = answer_paths(TESTS, DEPLOY)
    result = await recall("what about deploys", DOCS, select=select, now=NOW)
    assert result.strategy == "model"
    assert result.docs == (TESTS, DEPLOY)
    assert result.text.startswith("## Relevant memory\n")
    (call,) = select.calls
    assert call["json_schema"] == SELECTOR_SCHEMA
    assert call["timeout"] == SELECTOR_TIMEOUT_SECONDS == 30.0


async def test_the_selector_sees_headers_only_with_absolute_paths() -> None:
    select = answer_paths()
    await recall("  deploy  ", DOCS, select=select, now=NOW, active_tools=["shell", "read_file"])
    user = select.calls[0]["user"]
    assert user.startswith("Query: deploy\n\nAvailable memories:\n")
    assert f"- [feedback] {DEPLOY.path} ({iso_time(DEPLOY.mtime)}): Steps before a production deploy" in user
    assert f"- [user] {ROLE.path} (" in user
    assert "smoke tests" not in user and "pg fixture" not in user  # never the body
    assert user.endswith("\n\nRecently used tools: shell, read_file")
    assert "up to 5" in select.calls[0]["system"] or "at most 5" in select.calls[0]["system"]


async def test_an_empty_model_choice_recalls_nothing() -> None:
    result = await recall("deploy", DOCS, select=answer_paths(), now=NOW)
    assert result == NOTHING and result.strategy == "none" and result.text == ""


@pytest.mark.parametrize(
    "answer",
    [
        "not json",
        json.dumps({"selected": []}),
        json.dumps({"selected_memories": ["/elsewhere/x.md"]}),
        json.dumps({"selected_memories": [str(DEPLOY.path)] * 6}),
        json.dumps({"selected_memories": [3]}),
        json.dumps(["/mem/project/feedback/deploy.md"]),
    ],
)
async def test_an_invalid_answer_falls_back_to_the_heuristic(answer: str) -> None:
    result = await recall("production deploy", DOCS, select=Selector(lambda _c: answer), now=NOW)
    assert result.strategy == "heuristic"
    assert result.docs == (DEPLOY,)


async def test_a_selector_error_falls_back_to_the_heuristic() -> None:
    def boom(_call: Mapping[str, Any]) -> str:
        raise ConnectionError("endpoint down")

    result = await recall("production deploy", DOCS, select=Selector(boom), now=NOW)
    assert (result.strategy, result.docs) == ("heuristic", (DEPLOY,))


async def test_a_selector_that_never_answers_falls_back_after_the_timeout() -> None:
    started = asyncio.Event()

    async def never(*, system: str, user: str, json_schema: Mapping[str, Any] | None, timeout: float) -> str:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    hung: SideQuery = never
    result = await recall("production deploy", DOCS, select=hung, now=NOW, selector_timeout=0.05)
    assert started.is_set()
    assert (result.strategy, result.docs) == ("heuristic", (DEPLOY,))


async def test_a_fenced_json_answer_is_accepted() -> None:
    select = Selector(lambda _c: "```json\n" + json.dumps({"selected_memories": [str(ROLE.path)]}) + "\n```")
    result = await recall("anything", DOCS, select=select, now=NOW)
    assert (result.strategy, result.docs) == ("model", (ROLE,))


async def test_a_user_cancel_returns_nothing_even_while_the_selector_runs() -> None:
    cancel = asyncio.Event()
    entered = asyncio.Event()
    aborted = asyncio.Event()

    async def slow(*, system: str, user: str, json_schema: Mapping[str, Any] | None, timeout: float) -> str:
        entered.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            aborted.set()
            raise
        return "{}"

    task = asyncio.create_task(recall("production deploy", DOCS, select=slow, now=NOW, cancel=cancel))
    await entered.wait()
    cancel.set()
    assert await task == NOTHING
    assert aborted.is_set()  # the side query was cancelled, not left running


async def test_cancel_before_start_and_without_a_model() -> None:
    cancel = asyncio.Event()
    cancel.set()
    assert await recall("production deploy", DOCS, select=None, now=NOW, cancel=cancel) == NOTHING


async def test_no_model_means_the_heuristic() -> None:
    result = await recall("production deploy", DOCS, select=None, now=NOW)
    assert (result.strategy, result.docs) == ("heuristic", (DEPLOY,))
    assert await recall("kubernetes", DOCS, select=None, now=NOW) == NOTHING


async def test_empty_query_no_docs_or_zero_limit_recall_nothing() -> None:
    select = answer_paths(DEPLOY)
    assert await recall("   ", DOCS, select=select, now=NOW) == NOTHING
    assert await recall("deploy", [], select=select, now=NOW) == NOTHING
    assert await recall("deploy", DOCS, select=select, now=NOW, limit=0) == NOTHING
    assert select.calls == []


async def test_at_most_five_documents() -> None:
    many = [doc(f"d{i}", title=f"deploy note {i}") for i in range(9)]
    assert len((await recall("deploy", many, select=None, now=NOW)).docs) == 5
    select = Selector(lambda _c: json.dumps({"selected_memories": [str(d.path) for d in many[:5]]}))
    assert len((await recall("deploy", many, select=select, now=NOW)).docs) == 5


async def test_model_candidates_interleave_lexical_hits_with_recent_others() -> None:
    hits = [doc(f"hit{i}", title=f"deploy {i}", age_days=50 + i) for i in range(3)]
    others = [doc(f"other{i}", title=f"note {i}", age_days=i) for i in range(3)]
    select = answer_paths()
    await recall("deploy", [*others, *hits], select=select, now=NOW)
    listed = [line.split()[2] for line in select.calls[0]["user"].split("\n") if line.startswith("- [")]
    expected = [hits[0], others[0], hits[1], others[1], hits[2], others[2]]
    assert listed == [str(d.path) for d in expected]


def test_manifest_byte_cap_skips_lines_that_do_not_fit() -> None:
    big = [doc(f"big{i}", description="d" * 400) for i in range(100)]
    small = doc("small", description="short")
    text, included = manifest([*big, small])
    assert len(text.encode()) <= MAX_MANIFEST_BYTES
    assert small in included and len(included) < 101


def test_manifest_description_cut_at_512_utf16_units() -> None:
    long = doc("long", description="é" * 511 + "😀" + "tail")
    text, _ = manifest([long])
    assert text.endswith(": " + "é" * 511)  # the emoji would straddle unit 512, so it goes whole


def test_iso_time_matches_javascript() -> None:
    assert iso_time(0) == "1970-01-01T00:00:00.000Z"
    assert iso_time(1_700_000_000.1239) == "2023-11-14T22:13:20.123Z"


def test_rendered_text_is_exact() -> None:
    fresh = doc("fresh", title="Deploy checklist", description="Steps before deploy", body="Run smoke tests.", age_days=0.5)
    old = doc("old", type="user", title="Role", description="Backend engineer", body="", age_days=47.2)
    assert render_relevant_memory([fresh, old], NOW) == (
        "## Relevant memory\n"
        "\n"
        "Use the following memories only when they are directly relevant to the current request."
        " Verify file/function claims before relying on them.\n"
        "\n"
        "### Deploy checklist (feedback/fresh.md)\n"
        "Saved today.\n"
        "Steps before deploy\n"
        "\n"
        "Run smoke tests.\n"
        "\n"
        "### Role (user/old.md)\n"
        "Saved 47 days ago.\n"
        "Backend engineer\n"
        "\n"
        "_No detailed entries yet._\n"
        "\n"
        "> NOTE: This memory is 47 days old. Memories are point-in-time observations, not live state — claims"
        " about code behavior or file:line citations may be outdated. Verify against current code before asserting as fact.\n"
    )
    assert render_relevant_memory([], NOW) == ""


def test_yesterday_has_no_freshness_note() -> None:
    text = render_relevant_memory([doc("y", title="T", description="D", body="B", age_days=1.5)], NOW)
    assert "Saved yesterday." in text and "NOTE" not in text


def test_a_body_over_1200_characters_is_cut_with_a_note() -> None:
    body = "x" * 1195 + "     " + "y" * 50
    text = render_relevant_memory([doc("long", title="T", description="D", body=body)], NOW)
    assert "x" * 1195 + "\n\n> NOTE: Relevant memory truncated for prompt budget.\n" in text
    assert "yy" not in text
    exact = render_relevant_memory([doc("exact", title="T", description="D", body="z" * 1200)], NOW)
    assert "truncated" not in exact
    astral = render_relevant_memory([doc("a", title="T", description="D", body="z" * 1199 + "😀" + "z")], NOW)
    assert "z" * 1199 + "\n\n> NOTE: Relevant memory truncated" in astral


def test_relative_path_or_file_name_in_the_heading() -> None:
    d = doc("n", title="T", description="D", body="B")
    bare = type(d)(**{**d.__dict__, "relative_path": ""})
    assert "### T (n.md)" in render_relevant_memory([bare], NOW)


def test_tool_aliases() -> None:
    assert tool_aliases(" Shell ") == ["shell"]
    assert tool_aliases("server::Search") == ["server::search", "search"]
    assert tool_aliases("mcp__jira__create_issue") == ["mcp__jira__create_issue", "create_issue"]
    assert tool_aliases("mcp__srv__ns__tool") == ["mcp__srv__ns__tool", "ns__tool", "tool"]


def test_active_tool_filter() -> None:
    usage = doc("jira", type="reference", title="Jira tool usage reference", description="Parameter schema for create_issue")
    durable = doc("jira2", type="reference", title="Jira create_issue gotcha", description="Tool usage: the owner must approve")
    unrelated = doc("x", type="reference", title="Tool usage reference for grep")
    tools = ["mcp__jira__create_issue"]
    assert is_active_tool_noise(usage, tools)
    assert not is_active_tool_noise(durable, tools)  # a durable marker keeps it
    assert not is_active_tool_noise(unrelated, tools)  # does not name the tool
    assert not is_active_tool_noise(usage, [])


async def test_active_tool_noise_is_never_recalled_or_offered() -> None:
    usage = doc("jira", type="reference", title="Jira create_issue usage reference", description="Parameter schema for create_issue")
    select = answer_paths()
    await recall("create_issue jira", [usage, DEPLOY], select=select, now=NOW, active_tools=["mcp__jira__create_issue"])
    assert str(usage.path) not in select.calls[0]["user"]
    result = await recall("create_issue jira", [usage], select=None, now=NOW, active_tools=["mcp__jira__create_issue"])
    assert result == NOTHING
    result = await recall("create_issue jira", [usage], select=None, now=NOW)
    assert result.docs == (usage,)


async def test_a_set_of_tools_is_listed_sorted() -> None:
    select = answer_paths()
    await recall("deploy", DOCS, select=select, now=NOW, active_tools={"zeta", "alpha"})
    assert select.calls[0]["user"].endswith("Recently used tools: alpha, zeta")


async def test_ages_use_the_given_clock() -> None:
    old = doc("old", title="deploy", description="d", body="b", age_days=3)
    result = await recall("deploy", [old], select=None, now=NOW + 10 * DAY)
    assert "Saved 13 days ago." in result.text


async def test_fast_result_offers_the_heuristic_top_two_before_the_selector_answers() -> None:
    many = [doc(f"d{i}", title=f"deploy {i}", age_days=i) for i in range(5)]  # a tie: newest first
    seen: list[Any] = []
    select = Selector(lambda _c: (seen.append("selector"), json.dumps({"selected_memories": [str(many[4].path)]}))[1])
    result = await recall("deploy", many, select=select, now=NOW, on_fast_result=seen.append)
    fast = seen[0]
    assert seen[1] == "selector"  # offered before the model was asked
    assert (fast.strategy, fast.docs) == ("heuristic", tuple(many[:2]))
    assert fast.text.startswith("## Relevant memory")
    assert (result.strategy, result.docs) == ("model", (many[4],))


async def test_no_fast_result_without_a_lexical_hit() -> None:
    seen: list[Any] = []
    await recall("kubernetes", DOCS, select=answer_paths(), now=NOW, on_fast_result=seen.append)
    assert seen == []
