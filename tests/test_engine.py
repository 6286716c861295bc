"""The engine in-process, with plain objects: per-chat state, the turn's hooks, the fork primitive.

No server: the engine is driven directly against the scripted OpenAI server,
as the CLI drives it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from support.rules_repo import git, make_rules_repo
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.agent.fork import ParentRequest, run_fork
from qwen_lsp.agent.hooks import Feature, Prefetch, Turn, TurnDone
from qwen_lsp.agent.tools import read_only_tools
from qwen_lsp.workspace import Listeners, Workspace
from qwen_lsp.engine import OPENING_FRESH
from qwen_lsp.errors import EngineError
from qwen_lsp.llm.client import ChatClient
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.protocol import SkillsChanged
from qwen_lsp.sessions.registry import ChatSession


@pytest.fixture
def repo(home: Path, tmp_path: Path) -> Path:
    return make_rules_repo(tmp_path / "ws")


def ignore(_event: TurnEvent) -> None:
    return None


class Probe(Feature):
    """A test's feature: whichever hooks it is given, the rest do nothing."""

    def __init__(
        self,
        *,
        block: str = "",
        recall: Callable[[ChatSession, str], Prefetch] | None = None,
        before: Callable[[ChatSession], Awaitable[None]] | None = None,
        after: Callable[[TurnDone], None] | None = None,
    ) -> None:
        self._block, self._recall, self._before, self._after = block, recall, before, after

    def prompt_block(self) -> str:
        return self._block

    def recall(self, session: ChatSession, prompt: str) -> Prefetch | None:
        return self._recall(session, prompt) if self._recall else None

    async def before_request(self, turn: Turn) -> None:
        if self._before:
            await self._before(turn.session)

    def after_turn(self, done: TurnDone) -> None:
        if self._after:
            self._after(done)


NO_MEMORY = {"memory": {"enabled": False}}
"""With a probe in memory's place, as the hooks it stands for."""


def make_engine(repo: Path, scripted: ScriptedOpenAI, **kwargs: object) -> tuple[Workspace, list[SkillsChanged]]:
    changes: list[SkillsChanged] = []
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    engine = Workspace(repo, counter=TokenCounter(), env=env, listeners=Listeners(skills_changed=changes.append), **kwargs)  # type: ignore[arg-type]
    return engine, changes


def user_parts(scripted: ScriptedOpenAI) -> str:
    last = [m for m in scripted.chat_requests()[-1].body["messages"] if m["role"] == "user"][-1]
    content = last["content"]
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content)


def system(scripted: ScriptedOpenAI) -> str:
    return str(scripted.chat_requests()[-1].body["messages"][0]["content"])


async def test_two_chats_keep_their_own_snapshot_and_rules(repo: Path, scripted: ScriptedOpenAI) -> None:
    engine, changes = make_engine(repo, scripted)
    try:
        a = (await engine.chat("A1", emit=ignore)).session_id
        a_system = system(scripted)
        git(repo, "commit", "-q", "--allow-empty", "-m", "two")
        await engine.document_opened(repo / "src" / "app.py", (repo / "src" / "app.py").as_uri())
        assert changes[-1].activated == [".qwen/rules/py.md"]

        b = (await engine.chat("B1", emit=ignore)).session_id
        assert "two" in system(scripted).split("Recent commits")[1] and "PY RULE" in user_parts(scripted)

        await engine.chat("A2", session_id=a, emit=ignore)
        assert system(scripted) == a_system and "PY RULE" in user_parts(scripted)

        scripted.enqueue(Reply(tool_calls=[ToolCallSpec("read_file", {"file_path": str(repo / "lib" / "util.js")})]), Reply(chunks=["ok"]))
        await engine.chat("B2", session_id=b, emit=ignore)
        assert changes[-1].activated == [".qwen/rules/js.md"] and changes[-1].trigger == (repo / "lib" / "util.js").as_uri()
        await engine.chat("B3", session_id=b, emit=ignore)
        assert "JS RULE" in user_parts(scripted)

        await engine.chat("A3", session_id=a, emit=ignore)
        assert "JS RULE" not in user_parts(scripted) and system(scripted) == a_system
    finally:
        await engine.drain()


async def test_the_inspector_reads_a_chat_from_disk_without_opening_it(repo: Path, scripted: ScriptedOpenAI) -> None:
    first, _ = make_engine(repo, scripted)
    sid = (await first.chat("remember me", emit=ignore)).session_id
    await first.drain()
    engine, _ = make_engine(repo, scripted)
    try:
        report = await engine.context_report(sid)
        assert any(s.name == "history" and s.tokens > 0 for s in report.sections)
        assert engine.sessions.get(sid) is None
        with pytest.raises(EngineError) as info:
            await engine.context_report("no-such-session")
        assert info.value.kind == "not_found"
    finally:
        await engine.drain()


async def test_hooks_see_every_request_and_the_turn(repo: Path, scripted: ScriptedOpenAI) -> None:
    seen: list[str] = []

    async def recalled() -> list[str]:
        return ["<system-reminder>\nRECALLED MEMORY\n</system-reminder>"]

    def recall(session: ChatSession, prompt: str) -> Prefetch:
        seen.append(f"recall:{prompt}")
        return Prefetch(asyncio.ensure_future(recalled()))

    async def before(session: ChatSession) -> None:
        seen.append(f"before:{len(session.history)}")

    def after(done: TurnDone) -> None:
        seen.append(f"after:{done.outcome.text}:{done.capture().system == system(scripted)}")

    probe = Probe(block="# MEMORY INDEX", recall=recall, before=before, after=after)
    engine, _ = make_engine(repo, scripted, features=[probe], client_settings=NO_MEMORY)
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("list_directory", {"path": str(repo)})]), Reply(chunks=["done"]))
    try:
        await engine.chat("hello", emit=ignore)
    finally:
        await engine.drain()
    assert seen == ["recall:hello", "before:1", "before:3", "after:done:True"]
    assert system(scripted).endswith("\n\n---\n\n# MEMORY INDEX")
    first_user = [m for m in scripted.chat_requests()[0].body["messages"] if m["role"] == "user"][-1]["content"]
    texts = [p["text"] for p in first_user]
    # Settled in time: after the startup reminders, as Qwen Code 0.24.4 places it; the prompt last.
    at = next(i for i, t in enumerate(texts) if "RECALLED MEMORY" in t)
    assert at > 0 and all(t.startswith("<system-reminder>") for t in texts[:at]) and texts[at + 1 :] == ["hello"]
    assert sum("RECALLED MEMORY" in json.dumps(r.body) for r in scripted.chat_requests()[1:]) == 1  # the history carries it once


async def test_a_recall_that_never_answers_does_not_hold_the_request(repo: Path, scripted: ScriptedOpenAI) -> None:
    never = asyncio.Event()
    tasks: list[asyncio.Task[list[str]]] = []

    async def stuck() -> list[str]:
        await never.wait()
        return ["<system-reminder>\nTOO LATE\n</system-reminder>"]

    def recall(session: ChatSession, prompt: str) -> Prefetch:
        tasks.append(asyncio.ensure_future(stuck()))
        return Prefetch(tasks[-1])

    engine, _ = make_engine(repo, scripted, features=[Probe(recall=recall)], client_settings=NO_MEMORY)
    scripted.enqueue(Reply(chunks=["answered"]))
    try:
        result = await engine.chat("hello", emit=ignore)
    finally:
        await engine.drain()
    assert result.text == "answered"
    assert "TOO LATE" not in json.dumps(scripted.chat_requests()[0].body)
    await asyncio.gather(tasks[0], return_exceptions=True)
    assert tasks[0].cancelled()  # the turn is over: the prefetch is dropped, not left running


async def test_a_recall_that_settles_late_follows_the_next_function_responses(repo: Path, scripted: ScriptedOpenAI) -> None:
    release = asyncio.Event()

    async def late() -> list[str]:
        await release.wait()
        return ["<system-reminder>\nLATE MEMORY\n</system-reminder>"]

    async def before(session: ChatSession) -> None:
        if not release.is_set():  # the first request is being sent: now let recall settle
            release.set()
            for _ in range(5):
                await asyncio.sleep(0)

    probe = Probe(recall=lambda _s, _p: Prefetch(asyncio.ensure_future(late())), before=before)
    engine, _ = make_engine(repo, scripted, features=[probe], client_settings=NO_MEMORY)
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("list_directory", {"path": str(repo)})]), Reply(chunks=["done"]))
    try:
        await engine.chat("hello", emit=ignore)
    finally:
        await engine.drain()
    first, second = (r.body["messages"] for r in scripted.chat_requests())
    assert "LATE MEMORY" not in json.dumps(first)
    roles = [m["role"] for m in second]
    assert roles[-2:] == ["tool", "user"] and "LATE MEMORY" in json.dumps(second[-1])


async def test_a_fork_runs_beside_the_chat_and_records_nothing(repo: Path, scripted: ScriptedOpenAI, home: Path) -> None:
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("read_file", {"file_path": str(repo / "src" / "app.py")})]), Reply(chunks=["x is 1"]))
    async with ChatClient(scripted.base_url, "k", "scripted-model") as client:
        parent = ParentRequest.capture("side", [t.declaration() for t in read_only_tools()], [])
        result = await run_fork(client, parent, "what is x?", root=repo, tools=read_only_tools(), max_turns=3)
    assert result.text == "x is 1" and result.rounds == 2 and result.status == "completed"
    assert [c["role"] for c in result.produced] == ["model", "user", "model"]
    assert scripted.chat_requests()[0].body["messages"][0] == {"role": "system", "content": "side"}
    assert not list((home / ".qwen").glob("projects/*/chats/*.jsonl"))


async def test_a_fork_stops_at_its_round_budget(repo: Path, scripted: ScriptedOpenAI) -> None:
    looping = Reply(tool_calls=[ToolCallSpec("list_directory", {"path": str(repo)})])
    scripted.enqueue(looping, looping, looping)
    async with ChatClient(scripted.base_url, "k", "scripted-model") as client:
        parent = ParentRequest.capture("s", [t.declaration() for t in read_only_tools()], [])
        result = await run_fork(client, parent, "loop", root=repo, tools=read_only_tools(), max_turns=2)
    assert result.rounds == 2 and result.reason == "max_turns"
    assert len(scripted.chat_requests()) == 2


async def test_a_skill_switched_on_by_an_open_file_when_skills_come_back_names_that_file(repo: Path, scripted: ScriptedOpenAI) -> None:
    """Skills off, users.py opened, skills on again by a settings push: the notice names users.py, as a didOpen would."""
    skill = repo / ".qwen" / "skills" / "api-helper" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text('---\nname: api-helper\ndescription: API help\npaths: ["src/api/**"]\n---\n\nUse the API.\n')
    always = repo / ".qwen" / "skills" / "always" / "SKILL.md"
    always.parent.mkdir(parents=True)
    always.write_text("---\nname: always\ndescription: Always there\n---\n\nHi.\n")
    users = repo / "src" / "api" / "users.py"
    users.parent.mkdir(parents=True, exist_ok=True)
    users.write_text("def users():\n    return []\n")
    engine, changes = make_engine(repo, scripted, client_settings={"skills": {"enabled": False}})
    opened = await engine.document_opened(users, users.as_uri())  # its path rule switches on; no skill while skills are off
    assert opened is None or "api-helper" not in opened.activated
    await engine.update_client_settings({"skills": {"enabled": True}})
    triggered = [c for c in changes if "api-helper" in c.activated]
    assert [c.trigger for c in triggered] == [users.as_uri()]
    assert triggered[0].activated == ["api-helper"]
    assert not any("always" in c.activated for c in triggered), "an unconditional skill is not the open file's doing"
    await engine.drain()


async def test_a_chat_opened_well_before_its_first_message_prepares_again(repo: Path, scripted: ScriptedOpenAI) -> None:
    """The preparation started as a chat opens stands for its first turn only in the usual open → chat
    sequence; a chat opened earlier than that (an editor that opens it ahead) is prepared at its turn."""
    probe = Probe(block="BLOCK AS OPENED")
    engine, _ = make_engine(repo, scripted, features=[probe])
    try:
        opened = await engine.open_session(None)  # prepared as it opens, with the block of that moment
        probe._block = "BLOCK AT THE TURN"
        await asyncio.sleep(OPENING_FRESH + 0.1)  # let the opening's preparation age past its bound
        await engine.chat("hello", session_id=opened.id, emit=ignore)
        assert "BLOCK AT THE TURN" in system(scripted) and "BLOCK AS OPENED" not in system(scripted)
    finally:
        await engine.drain()


async def test_a_new_chat_whose_preparation_fails_as_it_opens_reports_it_at_its_turn(
    repo: Path, scripted: ScriptedOpenAI, tmp_path: Path
) -> None:
    changes: list[SkillsChanged] = []
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model",
           "QWEN_SYSTEM_MD": str(tmp_path / "missing.md")}
    engine = Workspace(repo, counter=TokenCounter(), env=env, listeners=Listeners(skills_changed=changes.append))
    try:
        with pytest.raises(EngineError) as raised:
            await engine.chat("hello", emit=ignore)
        assert raised.value.kind == "context" and "missing.md" in str(raised.value)
        assert scripted.chat_requests() == []
    finally:
        await engine.drain()


def test_declaration_cache_shares_one_read_only_list_per_set_of_tools() -> None:
    from qwen_lsp.agent.tool import DeclarationCache, ToolContext, ToolResult
    from qwen_lsp.llm.request_json import FrozenJSON

    class Named:
        def __init__(self, name: str) -> None:
            self.name = name
            self.calls = 0

        def declaration(self) -> dict[str, Any]:
            self.calls += 1
            return {"type": "function", "function": {"name": self.name}}

        async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            return ToolResult("unused")

    a, b = Named("a"), Named("b")
    cache = DeclarationCache()
    first = cache([a, b])
    assert cache([a, b]) is first and isinstance(first, FrozenJSON)
    assert (a.calls, b.calls) == (1, 1)
    other = cache([a])
    assert other is not first and [d["function"]["name"] for d in other] == ["a"]
    assert cache([a, Named("b")]) is not other  # another object with the same name is another tool


@pytest.mark.parametrize("reason, after_turn_runs", [("", False), ("keep it as it is", True)])
async def test_a_plain_denial_starts_no_after_turn_work(repo: Path, scripted: ScriptedOpenAI, reason: str, after_turn_runs: bool) -> None:
    """Qwen Code 0.24.4 ends the turn at the user's "no" and starts nothing after it (no memory extraction,
    no suggestion); a denial with the user's words goes on to an answer and the after-turn work."""
    from qwen_lsp.agent.approvals import Approval, PermissionRequest

    seen: list[str] = []

    async def ask(_request: PermissionRequest) -> Approval:
        return Approval("deny", reason, by_user=True)

    probe = Probe(after=lambda done: seen.append(done.outcome.finish_reason))
    engine, _ = make_engine(repo, scripted, features=[probe], client_settings=NO_MEMORY, ask=ask)
    target = repo / "src" / "app.py"
    scripted.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": "x = 1\n"}), ToolCallSpec("read_file", {"file_path": str(target)})]),
        Reply(chunks=["Left alone."]),
    )
    try:
        await engine.chat("change app.py", emit=ignore)
    finally:
        await engine.drain()
    assert seen == (["stop"] if after_turn_runs else [])
    assert len(scripted.chat_requests()) == (2 if after_turn_runs else 1)


async def test_a_rule_queued_at_open_reaches_the_first_request_when_the_context_was_dropped_meanwhile(repo: Path, scripted: ScriptedOpenAI) -> None:
    """Between a new chat's opening and its first turn the workspace's context may be dropped (the watches
    start, a context file changes): the opening no longer stands for the turn, which prepares anew, so the
    rule the open file queued goes with the first message instead of waiting a turn."""
    engine, _ = make_engine(repo, scripted, client_settings=NO_MEMORY)
    try:
        await engine.document_opened(repo / "src" / "app.py", (repo / "src" / "app.py").as_uri())
        session = await engine.open_session(None)  # a fresh opening, the rule queued on it
        engine.context.invalidate(None)
        scripted.enqueue(Reply(chunks=["ok"]))
        await engine.chat("first", session_id=session.id, emit=ignore)
        assert "PY RULE: type hints." in user_parts(scripted)
    finally:
        await engine.drain()
