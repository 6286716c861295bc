"""Skill review over LSP: the real server, the scripted model, a busy chat, a proposal, the user's answer.

The review is a forked run the server starts after a chat's 20th tool call;
the scripted model plays both the chat and the review. Its write target
(the proposal's own SKILL.md, named by a fresh id) is read from the review's
task message, as a real model would.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, running_server, wait_for

from qwen_lsp.files.paths import project_state_dir
from qwen_lsp.skills.model import SkillLevel
from qwen_lsp.skills.parse import parse_skill

SKILL = (
    "---\nname: fixture-refresh\ndescription: Regenerate the test fixtures after a schema change\nsource: auto-skill\n---\n\n"
    "1. Run the schema dump.\n2. Rewrite fixtures/*.json from it.\n3. Run the tests.\n"
)
TARGET = re.compile(r"write_file: (/\S+/SKILL\.md)")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "notes.txt").write_text("schema v2\n")
    return ws


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    options = {"skills": {"review": {"enabled": True}}}
    async with running_server(home, workspace, scripted.base_url, options) as client:
        client.proposed = []
        client.feature("qwen/skillProposed")(_recorder(client.proposed))
        yield client


def _recorder(sink: list[Any]):
    def record(params: Any) -> None:
        sink.append(as_dict(params))

    return record


def reads(workspace: Path, n: int) -> Reply:
    """One model round calling ``read_file`` ``n`` times."""
    return Reply(chunks=[], tool_calls=[ToolCallSpec("read_file", {"file_path": str(workspace / "notes.txt")}) for _ in range(n)])


def review_target(body: dict[str, Any]) -> str:
    task = body["messages"][-1]["content"]
    found = TARGET.search(task if isinstance(task, str) else str(task))
    assert found, task
    return found.group(1)


def review_writes(*calls: tuple[str | None, str]) -> Any:
    """The review's first round: ``write_file`` calls; a None path means the proposal's own target."""

    def reply(body: dict[str, Any]) -> Reply:
        target = review_target(body)
        return Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": path or target, "content": text}) for path, text in calls])

    return reply


def tree(root: Path) -> dict[str, bytes] | None:
    if not root.exists():
        return None
    return {str(p.relative_to(root)) + ("/" if p.is_dir() else ""): b"" if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


def review_done(lsp: Any) -> bool:
    return any(len(reports) >= 2 for reports in lsp.progress_reports.values())


async def busy_chat(lsp: Any, scripted: ScriptedOpenAI, workspace: Path, *review: Any) -> str:
    """Two turns, 12 + 8 tool calls; the review's replies queued behind them."""
    scripted.enqueue(reads(workspace, 12), Reply(["Checked the notes."]))
    first = as_dict(await chat(lsp, "check the notes"))
    assert len(scripted.chat_requests()) == 2 and lsp.progress_reports == {}  # 12 calls: no review yet
    scripted.enqueue(reads(workspace, 8), Reply(["Checked again."]), *review)
    await chat(lsp, "and again", sessionId=first["sessionId"])
    return str(first["sessionId"])


async def test_a_busy_chat_gets_a_proposal_that_accept_turns_into_a_listed_skill(lsp, scripted: ScriptedOpenAI, workspace: Path, home: Path):
    await busy_chat(lsp, scripted, workspace, review_writes((None, SKILL)), Reply(["Saved a skill."]))
    await wait_for(lambda: lsp.proposed, "qwen/skillProposed")
    [proposal] = lsp.proposed
    assert (proposal["name"], proposal["description"], proposal["text"]) == ("fixture-refresh", "Regenerate the test fixtures after a schema change", SKILL)
    definition, _body = parse_skill(proposal["text"], Path("SKILL.md"), SkillLevel.PROJECT)
    assert definition.name == "fixture-refresh"

    requests = scripted.chat_requests()
    assert len(requests) == 6
    chat_request, review_request = requests[3].body, requests[4].body
    # A fork of the last turn: same system prompt and tools (write_file appended: this chat cannot edit), the turn as its prefix.
    assert review_request["tools"][: len(chat_request["tools"])] == chat_request["tools"]
    assert [t["function"]["name"] for t in review_request["tools"][len(chat_request["tools"]) :]] == ["write_file"]
    assert review_request["messages"][: len(chat_request["messages"])] == chat_request["messages"]
    pending = project_state_dir(workspace) / "skill-proposals" / proposal["proposalId"] / "SKILL.md"
    assert review_target(review_request) == str(pending) and pending.read_text() == SKILL
    assert not (workspace / ".qwen").exists()  # not a skill until accepted
    listed = as_dict(await lsp.protocol.send_request_async("qwen/skills/list", {}))["skills"]
    assert "fixture-refresh" not in [s["name"] for s in listed]

    accepted = as_dict(await lsp.protocol.send_request_async("qwen/skillProposal/accept", {"proposalId": proposal["proposalId"]}))
    skill = workspace / ".qwen" / "skills" / "auto-skill-fixture-refresh" / "SKILL.md"
    assert accepted == {"path": str(skill)} and skill.read_text() == SKILL
    listed = as_dict(await lsp.protocol.send_request_async("qwen/skills/list", {}))["skills"]
    [row] = [s for s in listed if s["name"] == "fixture-refresh"]
    assert (row["level"], row["path"]) == ("project", str(skill))
    assert not pending.parent.parent.exists()
    with pytest.raises(JsonRpcException) as again:
        await lsp.protocol.send_request_async("qwen/skillProposal/accept", {"proposalId": proposal["proposalId"]})
    assert again.value.code == -31004 and "accepted or discarded" in again.value.message


async def test_discarding_a_proposal_leaves_nothing(lsp, scripted: ScriptedOpenAI, workspace: Path):
    pending = project_state_dir(workspace) / "skill-proposals"
    before = (tree(pending), tree(workspace))
    await busy_chat(lsp, scripted, workspace, review_writes((None, SKILL)), Reply(["Saved a skill."]))
    await wait_for(lambda: lsp.proposed, "qwen/skillProposed")
    assert tree(pending) is not None
    assert as_dict(await lsp.protocol.send_request_async("qwen/skillProposal/discard", {"proposalId": lsp.proposed[0]["proposalId"]})) == {}
    assert (tree(pending), tree(workspace)) == before
    with pytest.raises(JsonRpcException) as bad:
        await lsp.protocol.send_request_async("qwen/skillProposal/discard", {"proposalId": "../../x"})
    assert bad.value.code == -32602 and "proposalId" in bad.value.message


async def test_an_invalid_skill_or_a_write_elsewhere_proposes_nothing(lsp, scripted: ScriptedOpenAI, workspace: Path):
    pending = project_state_dir(workspace) / "skill-proposals"
    elsewhere = workspace / ".qwen" / "skills" / "fixture-refresh" / "SKILL.md"
    before = tree(workspace)
    writes = review_writes((None, "Regenerate the fixtures; no frontmatter."), (str(elsewhere), SKILL), (str(workspace / "notes.txt"), SKILL))
    await busy_chat(lsp, scripted, workspace, writes, Reply(["Nothing to save."]))
    await wait_for(lambda: review_done(lsp), "the review to end")
    answers = scripted.chat_requests()[-1].body["messages"][-3:]
    assert [m["role"] for m in answers] == ["tool"] * 3
    assert "missing YAML frontmatter" in answers[0]["content"]
    assert all("Permission denied" in m["content"] and "ManagedSkillReview" in m["content"] for m in answers[1:])
    assert lsp.proposed == [] and tree(pending) is None and tree(workspace) == before


async def test_nineteen_tool_calls_start_no_review(lsp, scripted: ScriptedOpenAI, workspace: Path):
    scripted.enqueue(reads(workspace, 12), Reply(["one"]))
    first = as_dict(await chat(lsp, "check"))
    scripted.enqueue(reads(workspace, 7), Reply(["two"]))
    await chat(lsp, "again", sessionId=first["sessionId"])
    scripted.enqueue(Reply(["three"]))  # a turn with no tool call: the count stays at 19
    await chat(lsp, "thanks", sessionId=first["sessionId"])
    assert len(scripted.chat_requests()) == 5 and lsp.progress_reports == {} and lsp.proposed == []
