"""An accepted speculation is a turn like a typed one for what runs after turns (memory, skill review).

The engine in-process against the scripted model: the turn's after-turn hook
must see the accepted speculative turn — its text, its tool call, the file
it wrote — and the request a fork would reuse must end with it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from qwen_lsp.agent.approvals import Approval, PermissionRequest
from qwen_lsp.agent.events import TurnEvent, TurnOutcome
from qwen_lsp.agent.fork import ParentRequest
from qwen_lsp.agent.hooks import Feature, TurnDone
from qwen_lsp.features.followups.feature import FollowupsFeature

from qwen_lsp.workspace import Listeners, Workspace
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.protocol import SuggestionNotice


def ignore(_event: TurnEvent) -> None:
    return None


async def test_an_accepted_speculation_runs_the_after_turn_hooks_with_its_calls_and_writes(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    target = ws / "x.py"
    target.write_text("def f():\n    return 1\n")
    seen: list[tuple[str, TurnOutcome, ParentRequest]] = []

    class AfterTurn(Feature):
        def after_turn(self, done: TurnDone) -> None:
            seen.append((done.session.id, done.outcome, done.capture()))

    notices: list[SuggestionNotice] = []
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    engine = Workspace(
        ws,
        counter=TokenCounter(),
        env=env,
        client_settings={"followup": {"enabled": True, "speculate": True}, "tools": {"approvalMode": "auto-edit"}, "memory": {"enabled": False}},
        listeners=Listeners(suggestion=notices.append),
        features=[AfterTurn()],
    )
    scripted.enqueue(
        Reply(chunks=["f returns 1."]),
        Reply(chunks=[json.dumps({"suggestion": "make f return 2"})]),
        Reply(chunks=["Editing."], tool_calls=[ToolCallSpec("edit", {"file_path": str(target), "old_string": "return 1", "new_string": "return 2"})]),
        Reply(chunks=["Done."]),
    )
    try:
        result = await engine.chat("what does f return?", emit=ignore)
        for _ in range(500):
            if any(n.ready for n in notices):
                break
            await asyncio.sleep(0.02)
        (ready,) = [n for n in notices if n.ready]
        assert len(seen) == 1 and seen[0][1].tool_calls == 0  # the typed turn

        accepted = await engine.feature(FollowupsFeature).accept(ready.suggestion_id, emit=ignore, turn_id="t-accept")
        assert accepted.applied is True
        assert target.read_text() == "def f():\n    return 2\n"
        assert len(seen) == 2
        session_id, outcome, parent = seen[1]
        assert session_id == result.session_id
        assert outcome.text == "Editing.Done." and outcome.tool_calls == 1 and outcome.written == [str(target)]
        assert parent.history[-4]["parts"][-1] == {"text": "make f return 2"}
        assert parent.history[-1]["parts"] == [{"text": "Done."}]
    finally:
        await engine.drain()


async def test_accepting_after_the_mode_became_stricter_runs_the_suggestion_as_an_asking_turn(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    """The speculation wrote under auto-edit; the user switched to default before accepting: nothing of it lands unasked."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    target = ws / "x.py"
    target.write_text("def f():\n    return 1\n")
    notices: list[SuggestionNotice] = []
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    asked: list[str] = []

    async def deny(request: PermissionRequest) -> Approval:
        asked.append(request.title)
        return Approval("deny")

    settings = {"followup": {"enabled": True, "speculate": True}, "tools": {"approvalMode": "auto-edit"}, "memory": {"enabled": False}}
    engine = Workspace(ws, counter=TokenCounter(), env=env, client_settings=settings, listeners=Listeners(suggestion=notices.append), ask=deny)
    edit = ToolCallSpec("edit", {"file_path": str(target), "old_string": "return 1", "new_string": "return 2"})
    scripted.enqueue(
        Reply(chunks=["f returns 1."]),
        Reply(chunks=[json.dumps({"suggestion": "make f return 2"})]),
        Reply(chunks=["Editing."], tool_calls=[edit]),
        Reply(chunks=["Done."]),
        Reply(chunks=["Editing."], tool_calls=[edit]),  # the suggestion, run as a typed turn after accept
        Reply(chunks=["Not allowed."]),
    )
    try:
        await engine.chat("what does f return?", emit=ignore)
        for _ in range(500):
            if any(n.ready for n in notices):
                break
            await asyncio.sleep(0.02)
        (ready,) = [n for n in notices if n.ready]
        # Awaited, as the server's request handlers wait for a pending reload (server/features.py) before a feature answers.
        await engine.update_client_settings({"followup": {"enabled": True, "speculate": True}, "tools": {"approvalMode": "default"}, "memory": {"enabled": False}})
        accepted = await engine.feature(FollowupsFeature).accept(ready.suggestion_id, emit=ignore, turn_id="t-accept")
        assert accepted.applied is False
        assert asked == ["Edit x.py"]  # the write asked, under the mode in effect at accept time
        assert target.read_text() == "def f():\n    return 1\n"
    finally:
        await engine.drain()
