"""Compaction through the engine, against the scripted OpenAI server: automatic, manual, failures, cancel.

A 30,000-token window with ``autoCompactThreshold`` 0.7 keeps the numbers
small: warn 1,000, auto 21,000, hard 24,000 (Qwen Code 0.24.4's formula). The scripted replies report the prompt
sizes that drive the thresholds.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from support.scripted_openai import HttpError, Reply, ScriptedOpenAI, Stall, ToolCallSpec

from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.compaction.compress import COMPACT_MAX_OUTPUT_TOKENS
from qwen_lsp.compaction.prompts import compression_prompt
from qwen_lsp.compaction.summary import RESUME_TRAILER, SNAPSHOT_REQUEST, SUMMARY_ACK
from qwen_lsp.features.compaction.feature import CompactionFeature

from qwen_lsp.workspace import Listeners, Workspace
from qwen_lsp.llm.content import Content
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.protocol import ContextStatus

WINDOW = {"model": {"contextWindow": 30_000}, "context": {"autoCompactThreshold": 0.7}}
SUMMARY = "<analysis>thinking it over</analysis>\n<state_snapshot><current_work>fixing the parser</current_work></state_snapshot>"


def usage(prompt: int, completion: int = 20) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@pytest.fixture
def repo(home: Path, tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    (r / "notes.txt").write_text("remember the parser\n")
    return r


class Run:
    def __init__(self, repo: Path, scripted: ScriptedOpenAI, settings: dict[str, Any] | None = None) -> None:
        self.statuses: list[ContextStatus] = []
        self.progress: list[str] = []
        self.events: list[TurnEvent] = []
        env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}

        def begin(title: str) -> Any:
            self.progress.append(f"begin {title}")
            return lambda message: self.progress.append(f"end {message}")

        listeners = Listeners(context_status=self.statuses.append, progress=begin)
        self.engine = Workspace(repo, counter=TokenCounter(), env=env, client_settings=settings or WINDOW, listeners=listeners)

    async def chat(self, prompt: str, session_id: str | None = None) -> str:
        return (await self.engine.chat(prompt, session_id=session_id, emit=self.events.append)).session_id

    def notes(self) -> list[str]:
        return [e.text or "" for e in self.events if e.kind == "status"]


def roles(body: dict[str, Any]) -> list[str]:
    return [m["role"] for m in body["messages"]]


def text(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content)


def records(engine: Workspace, session_id: str) -> list[dict[str, Any]]:
    session = engine.sessions.get(session_id)
    assert session is not None
    return [json.loads(line) for line in session.recorder.path.read_text().splitlines()]


def checkpoints(engine: Workspace, session_id: str) -> list[dict[str, Any]]:
    return [r for r in records(engine, session_id) if r["type"] == "system" and r.get("subtype") == "chat_compression"]


async def test_past_auto_the_next_request_carries_the_summary_and_acknowledgement(repo: Path, scripted: ScriptedOpenAI) -> None:
    run = Run(repo, scripted)
    try:
        scripted.enqueue(Reply(chunks=["first answer"], usage=usage(22_000)))
        sid = await run.chat("start the parser work")
        assert not checkpoints(run.engine, sid)
        scripted.enqueue(Reply(chunks=[SUMMARY], usage=usage(21_500, 60)), Reply(chunks=["continuing"], usage=usage(1_900)))
        await run.chat("and now the tests", sid)

        side, main = (r.body for r in scripted.chat_requests()[-2:])
        assert side["messages"][0] == {"role": "system", "content": compression_prompt()}
        assert text(side["messages"][-1]) == SNAPSHOT_REQUEST and side["max_tokens"] == COMPACT_MAX_OUTPUT_TOKENS
        assert "tools" not in side and side["stream"] is True
        assert "start the parser work" in json.dumps(side["messages"]) and "and now the tests" not in json.dumps(side["messages"])

        assert roles(main) == ["system", "user", "assistant", "user"]
        summary = text(main["messages"][1])
        assert summary.startswith("<state_snapshot>") and "<analysis>" not in summary and summary.endswith(RESUME_TRAILER)
        assert text(main["messages"][2]) == SUMMARY_ACK
        assert text(main["messages"][3]).endswith("and now the tests")
        assert "first answer" not in json.dumps(main["messages"])

        session = run.engine.sessions.get(sid)
        assert session is not None
        [checkpoint] = checkpoints(run.engine, sid)
        assert checkpoint["systemPayload"]["compressedHistory"] == session.history[:-1]  # the answer came after it
        info = checkpoint["systemPayload"]["info"]
        assert info["compressionStatus"] == 1 and info["triggerReason"] == "token_limit"
        assert info["originalTokenCount"] > 22_000 > info["newTokenCount"]
        assert any(n.startswith("Compressed the conversation history") for n in run.notes())
        assert run.progress[0] == "begin Compressing conversation history…" and run.progress[1].startswith("end Compressed")
        assert any(s.prompt_tokens == info["newTokenCount"] for s in run.statuses)  # contextStatus after compaction
        assert run.engine.feature(CompactionFeature).compactor.breaker(session).failures == 0

        later = Run(repo, scripted)  # another process: the chat resumes from the checkpoint
        try:
            resumed = await later.engine.open_session(sid)
            assert resumed.history == session.history and resumed.prompt_tokens == 1_900  # the answer after the checkpoint
            shown = (await later.engine.resume(sid)).messages  # the person sees the whole conversation, not the summary
            assert [(m.role, m.text) for m in shown] == [
                ("user", "start the parser work"), ("assistant", "first answer"), ("user", "and now the tests"), ("assistant", "continuing")
            ]
        finally:
            await later.engine.drain()
    finally:
        await run.engine.drain()


async def test_between_tool_rounds_the_pending_call_and_recent_file_survive(repo: Path, scripted: ScriptedOpenAI) -> None:
    run = Run(repo, scripted)
    try:
        path = str(repo / "notes.txt")
        scripted.enqueue(
            Reply(tool_calls=[ToolCallSpec("read_file", {"file_path": path}, id="c1")], usage=usage(10_000)),
            Reply(tool_calls=[ToolCallSpec("read_file", {"file_path": path}, id="c2")], usage=usage(23_000)),
            Reply(chunks=[SUMMARY], usage=usage(22_000, 60)),
            Reply(chunks=["done"], usage=usage(2_000)),
        )
        await run.chat("read the notes twice")
        main = scripted.chat_requests()[-1].body
        assert roles(main) == ["system", "user", "assistant", "user", "assistant", "tool"]
        attachments = text(main["messages"][3])
        assert "Recently accessed file (full current content embedded):" in attachments and "remember the parser" in attachments
        assert main["messages"][4]["tool_calls"][0]["id"] == "c2" and main["messages"][5]["tool_call_id"] == "c2"
    finally:
        await run.engine.drain()


async def test_an_analysis_only_summary_changes_nothing_and_three_failures_open_the_breaker(repo: Path, scripted: ScriptedOpenAI) -> None:
    run = Run(repo, scripted)
    try:
        scripted.enqueue(Reply(chunks=["a1"], usage=usage(22_000)))
        sid = await run.chat("one")
        session = run.engine.sessions.get(sid)
        assert session is not None
        for n in range(3):
            before = copy.deepcopy(session.history)
            scripted.enqueue(Reply(chunks=["<analysis>only a draft, never closed"], usage=usage(21_000, 30)), Reply(chunks=[f"a{n}"], usage=usage(22_000)))
            await run.chat(f"again {n}", sid)
            assert session.history[: len(before)] == before  # untouched, the new turn appended after it
            assert run.notes()[-1] == "Compression failed (the model returned no summary); the history is unchanged."
        assert run.engine.feature(CompactionFeature).compactor.breaker(session).open and not checkpoints(run.engine, sid)

        asked = len(scripted.chat_requests())
        scripted.enqueue(Reply(chunks=["plain"], usage=usage(22_500)))
        await run.chat("still at auto", sid)
        assert len(scripted.chat_requests()) == asked + 1  # the breaker kept the compression request away

    finally:
        await run.engine.drain()


async def test_the_hard_threshold_compresses_even_with_the_breaker_open(repo: Path, scripted: ScriptedOpenAI) -> None:
    run = Run(repo, scripted)
    try:
        scripted.enqueue(Reply(chunks=["a1"], usage=usage(22_000)))
        sid = await run.chat("one")
        session = run.engine.sessions.get(sid)
        assert session is not None
        for _ in range(3):
            scripted.enqueue(Reply(chunks=["<analysis>x</analysis>"], usage=usage(21_000, 10)), Reply(chunks=["a"], usage=usage(22_000)))
            await run.chat("again", sid)
        assert run.engine.feature(CompactionFeature).compactor.breaker(session).open
        scripted.enqueue(Reply(chunks=["big"], usage=usage(24_500)))
        await run.chat("grow", sid)  # the breaker blocks this one: only the main request
        scripted.enqueue(Reply(chunks=[SUMMARY], usage=usage(24_000, 60)), Reply(chunks=["after"], usage=usage(1_500)))
        await run.chat("past hard", sid)
        assert checkpoints(run.engine, sid) and not run.engine.feature(CompactionFeature).compactor.breaker(session).open
        assert roles(scripted.chat_requests()[-1].body) == ["system", "user", "assistant", "user"]
    finally:
        await run.engine.drain()


async def test_a_summary_at_the_output_cap_is_its_own_failure(repo: Path, scripted: ScriptedOpenAI) -> None:
    run = Run(repo, scripted)
    try:
        scripted.enqueue(Reply(chunks=["a1"], usage=usage(5_000)))
        sid = await run.chat("one")
        session = run.engine.sessions.get(sid)
        assert session is not None
        before = copy.deepcopy(session.history)
        scripted.enqueue(Reply(chunks=["<state_snapshot>cut"], usage=usage(5_000, COMPACT_MAX_OUTPUT_TOKENS)))
        result = await run.engine.feature(CompactionFeature).compress_chat(sid)
        assert result.status == "failed_output_truncated" and result.tokens_after == result.tokens_before
        assert session.history == before and not checkpoints(run.engine, sid)
        assert run.engine.feature(CompactionFeature).compactor.breaker(session).failures == 1
        # A server that ignores max_tokens and streams on and on is cut off the same way.
        scripted.enqueue(Reply(chunks=["<state_snapshot>" + "x" * 50_000] * 10, usage=usage(5_000, 10)))
        assert (await run.engine.feature(CompactionFeature).compress_chat(sid)).status == "failed_output_truncated"
        assert session.history == before and run.engine.feature(CompactionFeature).compactor.breaker(session).failures == 2
    finally:
        await run.engine.drain()


async def test_manual_compression_succeeds_below_the_threshold(repo: Path, scripted: ScriptedOpenAI) -> None:
    run = Run(repo, scripted)
    try:
        scripted.enqueue(Reply(chunks=["a1"], usage=usage(5_000)))
        sid = await run.chat("one")
        scripted.enqueue(Reply(chunks=["a2"], usage=usage(5_100)))
        await run.chat("two", sid)
        scripted.enqueue(Reply(chunks=[SUMMARY], usage=usage(4_900, 60)))
        result = await run.engine.feature(CompactionFeature).compress_chat(sid)
        assert result.status == "compressed" and result.tokens_after < result.tokens_before
        session = run.engine.sessions.get(sid)
        assert session is not None
        assert [c["role"] for c in session.history] == ["user", "model"]
        later = Run(repo, scripted)  # resumed elsewhere: the checkpoint's count stands until an answer reports one
        try:
            assert (await later.engine.open_session(sid)).prompt_tokens == result.tokens_after
        finally:
            await later.engine.drain()
        assert checkpoints(run.engine, sid)[-1]["systemPayload"]["info"]["triggerReason"] == "manual"
        assert run.statuses[-1].prompt_tokens == result.tokens_after
    finally:
        await run.engine.drain()


async def test_a_cancelled_compression_leaves_history_and_file_byte_identical(repo: Path, scripted: ScriptedOpenAI) -> None:
    run = Run(repo, scripted)
    try:
        scripted.enqueue(Reply(chunks=["a1"], usage=usage(5_000)))
        sid = await run.chat("one")
        session = run.engine.sessions.get(sid)
        assert session is not None
        history = copy.deepcopy(session.history)
        on_disk = session.recorder.path.read_bytes()
        scripted.enqueue(Stall(chunks=["<state_snapshot>partial"]))
        task = asyncio.ensure_future(run.engine.feature(CompactionFeature).compress_chat(sid))
        while len(scripted.chat_requests()) < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert session.history == history and session.recorder.path.read_bytes() == on_disk
        assert scripted.wait_for_disconnect()
        assert run.progress[-1] == "end Compression cancelled; the history is unchanged."
    finally:
        await run.engine.drain()


def image_turns(count: int) -> list[Content]:
    """A computer-use style history: each tool result carries a screenshot (as Qwen Code records them)."""
    out: list[Any] = [{"role": "user", "parts": [{"text": "click through the wizard"}]}]
    for n in range(count):
        out.append({"role": "model", "parts": [{"functionCall": {"id": f"s{n}", "name": "screenshot", "args": {"step": n}}}]})
        image = {"inlineData": {"mimeType": "image/png", "data": f"IMG{n}"}}
        out.append({"role": "user", "parts": [{"functionResponse": {"id": f"s{n}", "name": "screenshot", "response": {"output": "ok"}, "parts": [image]}}]})
    out.append({"role": "model", "parts": [{"text": "wizard done"}]})
    return out


async def test_too_many_tool_images_compress_under_the_token_threshold(repo: Path, scripted: ScriptedOpenAI) -> None:
    run = Run(repo, scripted, {"model": {"contextWindow": 1_000_000}})
    try:
        session = await run.engine.open_session(None)
        session.history.extend(image_turns(51))
        scripted.enqueue(Reply(chunks=[SUMMARY], usage=usage(3_000, 60)), Reply(chunks=["ok"], usage=usage(900)))
        await run.chat("next step", session.id)
        side = json.dumps(scripted.chat_requests()[-2].body["messages"])
        assert "[image: image/png]" in side and "IMG" not in side
        info = checkpoints(run.engine, session.id)[0]["systemPayload"]["info"]
        assert info["triggerReason"] == "image_overflow"
        restored = [p for c in session.history for p in c["parts"] if "inlineData" in p]
        assert [p["inlineData"]["data"] for p in restored] == ["IMG48", "IMG49", "IMG50"]  # type: ignore[typeddict-item]
        assert "too many images" in run.notes()[-1]
    finally:
        await run.engine.drain()


async def test_fast_compression_clears_old_results_without_a_model_call(repo: Path, scripted: ScriptedOpenAI) -> None:
    run = Run(repo, scripted, {**WINDOW, "context": {"clearContextOnIdle": {"toolResultsNumToKeep": 1}}})
    try:
        (repo / "notes.txt").write_text("remember the parser\n" + "a line of notes\n" * 200)
        path = str(repo / "notes.txt")
        scripted.enqueue(
            Reply(tool_calls=[ToolCallSpec("read_file", {"file_path": path}, id="r1")], reasoning=["hmm"], usage=usage(3_000)),
            Reply(tool_calls=[ToolCallSpec("read_file", {"file_path": path}, id="r2")], usage=usage(3_100)),
            Reply(chunks=["read"], usage=usage(3_200)),
        )
        sid = await run.chat("read twice")
        asked = len(scripted.chat_requests())
        result = await run.engine.feature(CompactionFeature).compress_chat(sid, "fast")
        assert len(scripted.chat_requests()) == asked and result.status == "compressed"
        assert result.tokens_after < result.tokens_before
        session = run.engine.sessions.get(sid)
        assert session is not None
        outputs = [p["functionResponse"]["response"].get("output") for c in session.history for p in c["parts"] if "functionResponse" in p]
        assert outputs[0] == "[Old tool result content cleared]" and "remember the parser" in str(outputs[1])
        assert not any(p.get("thought") for c in session.history for p in c["parts"])
        assert (await run.engine.feature(CompactionFeature).compress_chat(sid, "fast")).status == "noop"
    finally:
        await run.engine.drain()


async def test_the_idle_trigger_clears_old_results_before_the_next_request(repo: Path, scripted: ScriptedOpenAI) -> None:
    settings = {**WINDOW, "context": {"clearContextOnIdle": {"toolResultsThresholdMinutes": 0, "toolResultsNumToKeep": 1}}}
    run = Run(repo, scripted, settings)
    try:
        path = str(repo / "notes.txt")
        scripted.enqueue(
            Reply(tool_calls=[ToolCallSpec("read_file", {"file_path": path}, id="r1")], usage=usage(3_000)),
            Reply(tool_calls=[ToolCallSpec("read_file", {"file_path": path}, id="r2")], usage=usage(3_100)),
            Reply(chunks=["read"], usage=usage(3_200)),
        )
        await run.chat("read twice")
        last = scripted.chat_requests()[-1].body["messages"]
        tools = [m["content"] for m in last if m["role"] == "tool"]
        assert tools[0] == "[Old tool result content cleared]" and "remember the parser" in tools[1]
    finally:
        await run.engine.drain()


async def test_a_failed_compression_request_is_tried_once_and_the_turn_goes_on(repo: Path, scripted: ScriptedOpenAI) -> None:
    run = Run(repo, scripted)
    try:
        scripted.enqueue(Reply(chunks=["a1"], usage=usage(22_000)))
        sid = await run.chat("one")
        session = run.engine.sessions.get(sid)
        assert session is not None
        before = copy.deepcopy(session.history)
        asked = len(scripted.chat_requests())
        scripted.enqueue(HttpError(500, "overloaded"), Reply(chunks=["answered anyway"], usage=usage(22_100)))
        await run.chat("two", sid)
        assert len(scripted.chat_requests()) == asked + 2  # one compression attempt, then the turn's request
        assert session.history[: len(before)] == before and session.history[-1]["parts"] == [{"text": "answered anyway"}]
        assert run.notes()[-1].startswith("Compression failed; the history is unchanged.") and "overloaded" in run.notes()[-1]
        assert run.engine.feature(CompactionFeature).compactor.breaker(session).failures == 1 and not checkpoints(run.engine, sid)
    finally:
        await run.engine.drain()


async def test_a_new_chat_far_below_auto_is_sent_without_loading_the_vocabulary(repo: Path, scripted: ScriptedOpenAI) -> None:
    """A prompt's UTF-8 bytes bound its tokens: a small first request needs no tokenizer on its path."""
    run = Run(repo, scripted)
    try:
        scripted.enqueue(Reply(chunks=["hi"], usage=usage(900)), Reply(chunks=["again"], usage=usage(950)))
        sid = await run.chat("hello")
        await run.chat("and once more", sid)
        assert len(scripted.chat_requests()) == 2
        assert not run.engine.counter.loaded
    finally:
        await run.engine.drain()


async def test_a_new_chat_whose_bytes_pass_auto_is_counted_exactly(repo: Path, scripted: ScriptedOpenAI) -> None:
    """Over 21,000 bytes but far fewer tokens (a long run of one letter): the exact count decides, no compression."""
    run = Run(repo, scripted)
    try:
        scripted.enqueue(Reply(chunks=["read it"], usage=usage(3_000)))
        await run.chat("a" * 40_000)
        assert run.engine.counter.loaded
        assert len(scripted.chat_requests()) == 1 and not run.notes()
    finally:
        await run.engine.drain()
