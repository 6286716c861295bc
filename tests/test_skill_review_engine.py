"""Skill review through the engine: the setting applies without a restart, proposals outlive one, a review never blocks a turn."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from support.scripted_openai import Reply, ScriptedOpenAI, Stall, ToolCallSpec

from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.features.skill_review.feature import SkillReviewFeature

from qwen_lsp.workspace import Listeners, Workspace
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.protocol import SkillProposed

SKILL = "---\nname: bump-version\ndescription: Bump the version in every manifest\nsource: auto-skill\n---\n\n1. Edit pyproject.toml.\n2. Edit package.json.\n"


def ignore(_event: TurnEvent) -> None:
    return None


@pytest.fixture
def repo(home: Path) -> Path:
    ws = home / "work" / "app"
    ws.mkdir(parents=True)
    (ws / "a.txt").write_text("a\n")
    return ws


def make_engine(repo: Path, scripted: ScriptedOpenAI, proposed: list[SkillProposed], review: bool = True) -> Workspace:
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    settings = {"skills": {"review": {"enabled": review}}}
    return Workspace(repo, counter=TokenCounter(), env=env, client_settings=settings, listeners=Listeners(skill_proposed=proposed.append))


def reads(repo: Path, n: int) -> Reply:
    return Reply(chunks=[], tool_calls=[ToolCallSpec("read_file", {"file_path": str(repo / "a.txt")}) for _ in range(n)])


def write_proposal(body: dict[str, Any]) -> Reply:
    found = re.search(r"write_file: (/\S+/SKILL\.md)", str(body["messages"][-1]["content"]))
    assert found
    return Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": found.group(1), "content": SKILL})])


async def test_the_setting_applies_from_the_next_turn(repo: Path, scripted: ScriptedOpenAI) -> None:
    proposed: list[SkillProposed] = []
    engine = make_engine(repo, scripted, proposed, review=False)
    try:
        scripted.enqueue(reads(repo, 25), Reply(["done"]))
        first = await engine.chat("read a lot", emit=ignore)
        assert engine.feature(SkillReviewFeature).reviewer.running is None  # off: no review, whatever the count
        await engine.update_client_settings({"skills": {"review": {"enabled": True}}})
        scripted.enqueue(reads(repo, 19), Reply(["done"]))
        await engine.chat("more", session_id=first.session_id, emit=ignore)
        assert engine.feature(SkillReviewFeature).reviewer.running is None  # what was counted while off does not count
        scripted.enqueue(reads(repo, 1), Reply(["done"]), write_proposal, Reply(["Saved."]))
        await engine.chat("one more", session_id=first.session_id, emit=ignore)
        review = engine.feature(SkillReviewFeature).reviewer.running
        assert review is not None
        proposal = await review
        assert proposal is not None and [p.name for p in proposed] == ["bump-version"]
    finally:
        await engine.drain()


async def test_a_pending_proposal_is_offered_again_after_a_restart(repo: Path, scripted: ScriptedOpenAI) -> None:
    proposed: list[SkillProposed] = []
    engine = make_engine(repo, scripted, proposed)
    try:
        scripted.enqueue(reads(repo, 20), Reply(["done"]), write_proposal, Reply(["Saved."]))
        await engine.chat("busy", emit=ignore)
        assert engine.feature(SkillReviewFeature).reviewer.running is not None
        await engine.feature(SkillReviewFeature).reviewer.running
    finally:
        await engine.drain()
    [before] = proposed
    again: list[SkillProposed] = []
    restarted = make_engine(repo, scripted, again)
    try:
        await restarted.start_watching(asyncio.get_running_loop())
        for _ in range(500):
            if again:
                break
            await asyncio.sleep(0.01)
        assert again == [before]
        result = await restarted.feature(SkillReviewFeature).accept(before.proposal_id)
        assert Path(result.path) == repo / ".qwen" / "skills" / "auto-skill-bump-version" / "SKILL.md"
        assert "bump-version" in [s.name for s in restarted.skills.skills()]
    finally:
        await restarted.drain()


async def test_a_review_runs_beside_the_chat_and_shutdown_stops_it(repo: Path, scripted: ScriptedOpenAI) -> None:
    proposed: list[SkillProposed] = []
    engine = make_engine(repo, scripted, proposed)
    try:
        scripted.enqueue(reads(repo, 20), Reply(["done"]), Stall())  # the review's model never answers
        first = await engine.chat("busy", emit=ignore)
        assert first.text == "done"
        review = engine.feature(SkillReviewFeature).reviewer.running
        assert review is not None
        for _ in range(500):  # the review's request has reached the model (which holds it)
            if len(scripted.chat_requests()) == 3:
                break
            await asyncio.sleep(0.01)
        assert len(scripted.chat_requests()) == 3 and not review.done()
        scripted.enqueue(Reply(["still here"]))
        second = await engine.chat("next", session_id=first.session_id, emit=ignore)
        assert second.text == "still here"  # the chat does not wait for the review
    finally:
        await engine.drain()
    assert review.done() and review.result() is None and proposed == []
    assert not engine.feature(SkillReviewFeature).reviewer.store.pending_dir.exists()
