"""Building a workspace never holds the event loop: a chat streaming in one folder goes on while another is added.

Proved by order, not by time. The second folder's workspace is built by
``Workspace.open`` with an environment whose first read waits, on the
building thread, for the first folder's chat to deliver chunks that were
sent after the build began. If the build ran on the event loop, those
chunks could not be delivered until it ended: the wait would give up and
every such chunk would come after the folder was ready.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI

from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.workspace import Workspace

GATE_SECONDS = 30.0
"""Only reached when the loop is held (the failure this test looks for)."""


class GatedEnv(Mapping[str, str]):
    """An environment whose first read waits for ``gate``: the build pauses, on its own thread, until the chat moved on."""

    def __init__(self, values: dict[str, str], gate: threading.Event) -> None:
        self._values = values
        self._gate = gate
        self.waited: bool | None = None

    def _pass(self) -> None:
        if self.waited is None:
            self.waited = self._gate.wait(GATE_SECONDS)

    def __getitem__(self, key: str) -> str:
        self._pass()
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        self._pass()
        return iter(self._values)

    def __len__(self) -> int:
        self._pass()
        return len(self._values)


def write_skills(root: Path, count: int) -> None:
    for i in range(count):
        d = root / ".qwen" / "skills" / f"skill-{i}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(f"---\nname: skill-{i}\ndescription: Skill {i}\n---\n\nDo {i}.\n")


async def test_a_chat_streams_on_while_a_second_folder_is_opened(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    (first / ".git").mkdir(parents=True)
    (second / ".git").mkdir(parents=True)
    write_skills(second, 300)
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    chatting = await Workspace.open(first, counter=TokenCounter(), env=env)
    scripted.enqueue(Reply(chunks=[f"c{i} " for i in range(400)], delay=0.01))

    order: list[str] = []
    opening = False
    chunks_since_open = threading.Event()
    started = asyncio.Event()

    def emit(event: TurnEvent) -> None:
        if event.kind != "text":
            return
        order.append("chunk")
        started.set()
        if opening and order.count("chunk-after-open-began") < 3:
            order[-1] = "chunk-after-open-began"
            if order.count("chunk-after-open-began") == 3:
                chunks_since_open.set()

    gated = GatedEnv(env, chunks_since_open)
    chat = asyncio.ensure_future(chatting.chat("stream a long answer", emit=emit))
    try:
        await started.wait()
        opening = True
        order.append("open-began")
        added = await Workspace.open(second, counter=TokenCounter(), env=gated)
        order.append("opened")
        try:
            assert len(added.skills.skills()) >= 300
        finally:
            await added.drain()
        result = await chat
    finally:
        chat.cancel()
        await chatting.drain()
    assert gated.waited is True  # the build went on because the chat did, not because the wait gave up
    began, opened = order.index("open-began"), order.index("opened")
    assert order[began + 1 : opened].count("chunk-after-open-began") == 3
    assert result.text.startswith("c0 c1 ") and "c399" in result.text


class GatedLog(logging.Handler):
    """Holds the thread that logs a warning about ``watched`` until ``gate`` opens (once per arming).

    A broken SKILL.md is warned about by whichever thread parses it: the worker
    when the load runs off the loop, the loop itself when it does not. Waiting
    there for the chat to move on proves which.
    """

    def __init__(self, watched: Path) -> None:
        super().__init__(logging.WARNING)
        self._watched = str(Path(watched.parent.name) / watched.name)
        self.gate: threading.Event | None = None
        self.waited: bool | None = None

    def arm(self, gate: threading.Event) -> None:
        self.gate, self.waited = gate, None

    def emit(self, record: logging.LogRecord) -> None:
        if self.gate is not None and self.waited is None and self._watched in record.getMessage():
            self.waited = self.gate.wait(GATE_SECONDS)


async def test_a_chat_streams_on_while_skills_are_re_enabled_and_watched(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    """A settings push turning 300 skills back on, then starting the watches, each run while a chat in another folder streams."""
    first, second = tmp_path / "first", tmp_path / "second"
    (first / ".git").mkdir(parents=True)
    (second / ".git").mkdir(parents=True)
    write_skills(second, 300)
    broken = second / ".qwen" / "skills" / "broken" / "SKILL.md"
    broken.parent.mkdir()
    broken.write_text("no frontmatter: parsed with a warning\n")
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    chatting = await Workspace.open(first, counter=TokenCounter(), env=env)
    added = await Workspace.open(second, counter=TokenCounter(), env={}, client_settings={"skills": {"enabled": True}})
    await added.update_client_settings({"skills": {"enabled": False}})
    gated = GatedLog(broken)
    logging.getLogger("qwen_lsp.skills").addHandler(gated)
    scripted.enqueue(Reply(chunks=[f"c{i} " for i in range(600)], delay=0.01))

    order: list[str] = []
    since_began = 0
    chunks_since = threading.Event()
    started = asyncio.Event()

    def emit(event: TurnEvent) -> None:
        nonlocal since_began
        if event.kind != "text":
            return
        order.append("chunk")
        started.set()
        since_began += 1
        if since_began == 3:
            chunks_since.set()

    async def while_streaming(name: str, work: Callable[[], Awaitable[object]]) -> None:
        """``work`` must let three chunks through while it parses the touched broken skill."""
        nonlocal since_began, chunks_since
        chunks_since = threading.Event()
        gated.arm(chunks_since)
        os.utime(broken, ns=(time.time_ns(), time.time_ns()))  # parsed again (and warned about) by this load
        order.append(f"{name}-began")
        since_began = 0
        await work()
        order.append(f"{name}-done")
        assert gated.waited is True, f"{name}: the load went on because the chat did, not because the wait gave up"

    chat = asyncio.ensure_future(chatting.chat("stream a long answer", emit=emit))
    try:
        await started.wait()
        await while_streaming("reenable", lambda: added.update_client_settings({"skills": {"enabled": True}}))
        assert len(added.skills.skills()) >= 300
        await while_streaming("watch", lambda: added.start_watching(asyncio.get_running_loop()))
        result = await chat
    finally:
        chat.cancel()
        logging.getLogger("qwen_lsp.skills").removeHandler(gated)
        await added.drain()
        await chatting.drain()
    for name in ("reenable", "watch"):
        began, done = order.index(f"{name}-began"), order.index(f"{name}-done")
        assert order[began + 1 : done].count("chunk") >= 3
    assert result.text.startswith("c0 c1 ") and "c599" in result.text
