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
import threading
from collections.abc import Iterator, Mapping
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
