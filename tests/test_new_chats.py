"""New chats made ahead (``agent/new_chats.py``), in-process with plain objects and the scripted model.

What is checked is the order of events — a preparation (the features' prompt
blocks are read once per preparation), the test sending a message, the
model receiving a request — never a time.
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from support.rules_repo import git, make_rules_repo
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.agent.hooks import Feature
from qwen_lsp.agent.new_chats import SPARE_FRESH, NewChats
from qwen_lsp.context.git_as_data import state_files, state_mark
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.protocol import MemoryChanged
from qwen_lsp.workspace import Workspace


GATE_SECONDS = 30.0
"""A bound for a gated step, far above its real duration: reaching it fails the test, it never passes one."""


def ignore(_event: TurnEvent) -> None:
    return None


async def wait_until(condition: Callable[[], bool]) -> None:
    """Until ``condition`` holds (polled on the loop; a worker thread makes it true), at most :data:`GATE_SECONDS`."""
    async with asyncio.timeout(GATE_SECONDS):
        while not condition():
            await asyncio.sleep(0.005)


class Prepared(Feature):
    """Notes each preparation: the features' prompt blocks are read once in every one."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def prompt_block(self) -> str:
        self.events.append("prepared")
        return "PROBE BLOCK"


@pytest.fixture
def repo(home: Path, tmp_path: Path) -> Path:
    return make_rules_repo(tmp_path / "ws")


def make(repo: Path, scripted: ScriptedOpenAI, events: list[str], *, spare: bool = True) -> Workspace:
    def answer(body: dict[str, Any]) -> Reply:
        events.append("request")
        return Reply(chunks=["ok"])

    scripted.default = answer
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    return Workspace(repo, counter=TokenCounter(), env=env, features=[Prepared(events)], spare_chats=spare)


@pytest.mark.parametrize("spare", [True, False])
async def test_after_an_answer_the_next_new_chat_is_prepared_before_it_is_asked_for(
    repo: Path, scripted: ScriptedOpenAI, spare: bool
) -> None:
    events: list[str] = []
    ws = make(repo, scripted, events, spare=spare)
    try:
        first = await ws.chat("one", emit=ignore)
        await ws.engine.new_chats.made()
        events.append("sent")
        second = await ws.chat("two", emit=ignore)
        made_ahead = ["prepared", "request", "prepared", "sent", "request"]
        made_when_asked = ["prepared", "request", "sent", "prepared", "request"]
        assert events[:5] == (made_ahead if spare else made_when_asked)
        assert second.session_id != first.session_id
        assert "PROBE BLOCK" in scripted.chat_requests()[-1].body["messages"][0]["content"]
    finally:
        await ws.drain()


def git_out(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


CHANGES: dict[str, Callable[[Workspace, Path], object]] = {
    "an edit in the editor": lambda ws, repo: ws.document_changed(repo / "src" / "a.py"),
    "a settings reload": lambda ws, repo: ws.reload_settings(),
    "a memory write": lambda ws, repo: ws.listeners.memory_changed(MemoryChanged(scope="project", paths=[])),
    # Made in a terminal: each rewrites one of git's state files (agent/new_chats.py).
    "a commit": lambda ws, repo: git(repo, "commit", "-q", "--allow-empty", "-m", "made in a terminal"),
    "a staged file": lambda ws, repo: ((repo / "staged.txt").write_text("new\n"), git(repo, "add", "staged.txt")),
    "a branch checked out": lambda ws, repo: git(repo, "checkout", "-q", "-b", "topic"),
    "a stash": lambda ws, repo: ((repo / "src" / "app.py").write_text("changed\n"), git(repo, "stash", "-q")),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
async def test_what_a_chat_made_ahead_captured_changing_makes_the_next_chat_prepare_its_own(
    repo: Path, scripted: ScriptedOpenAI, change: str
) -> None:
    """Its git status and folder listing follow an edit or a git change, its settings a reload, its memory index a write."""
    events: list[str] = []
    ws = make(repo, scripted, events)
    try:
        await ws.chat("one", emit=ignore)
        await ws.engine.new_chats.made()
        done = CHANGES[change](ws, repo)
        if isinstance(done, Awaitable):
            await done
        events.append("sent")
        await ws.chat("two", emit=ignore)
        assert events[events.index("sent") :][:3] == ["sent", "prepared", "request"]
        system = scripted.chat_requests()[-1].body["messages"][0]["content"]
        assert git_out(repo, "log", "--oneline", "-n", "1") in system and git_out(repo, "branch", "--show-current") in system
    finally:
        await ws.drain()


@pytest.mark.parametrize("calls_tools", [True, False], ids=["a turn that calls tools", "a turn in words"])
async def test_only_a_turn_that_calls_tools_makes_the_next_chat_again(repo: Path, scripted: ScriptedOpenAI, calls_tools: bool) -> None:
    """A round's tools may change files (``git status`` would show them): a chat made before it is dropped and its
    answer makes another. A chat going on in plain words changes nothing a new chat would see: it is kept."""
    events: list[str] = []
    ws = make(repo, scripted, events)
    try:
        first = await ws.chat("one", emit=ignore)
        await ws.engine.new_chats.made()
        made = events.count("prepared")
        if calls_tools:
            scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("list_directory", {"path": str(repo)})]), Reply(chunks=["listed"]))
        await ws.chat("again", session_id=first.session_id, emit=ignore)
        await ws.engine.new_chats.made()
        assert events.count("prepared") == made + (2 if calls_tools else 1)  # the chat's own turn, and a chat made again
        events.append("sent")
        await ws.chat("two", emit=ignore)
        assert events[events.index("sent") :] == ["sent", "request"]
    finally:
        await ws.drain()


async def test_a_chat_made_ahead_stands_for_a_new_chat_only_while_fresh(repo: Path, scripted: ScriptedOpenAI) -> None:
    """As long as the folder's set-up snapshot stands for its first chat; older, it is as if the person started later."""
    events: list[str] = []
    ws = make(repo, scripted, events, spare=False)
    now = [1000.0]
    chats = NewChats(ws.context, ws.sessions, ws.engine.preparation, spare=True, clock=lambda: now[0])
    try:
        chats.refill()
        await chats.made()
        now[0] += SPARE_FRESH
        fresh = await chats.open()
        assert events == ["prepared"] and ws.sessions.get(fresh.id) is fresh
        chats.refill()
        await chats.made()
        now[0] += SPARE_FRESH + 1
        stale = await chats.open()
        assert events == ["prepared"] * 3 and stale.id != fresh.id
    finally:
        await chats.close()
        await ws.drain()


async def test_a_chat_being_made_ahead_when_the_folder_closes_is_waited_for_and_never_used(repo: Path, scripted: ScriptedOpenAI) -> None:
    events: list[str] = []
    ws = make(repo, scripted, events)
    await ws.chat("one", emit=ignore)  # its answer starts the next chat's making
    await ws.drain()
    assert events.count("prepared") == 2
    ws.engine.new_chats.refill()
    await ws.engine.new_chats.made()
    assert events.count("prepared") == 2


def test_git_state_files_follow_a_linked_worktree_and_never_leave_the_repository(tmp_path: Path, home: Path) -> None:
    repo = make_rules_repo(tmp_path / "ws")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    files = state_files(str(linked / "src"))
    mark = state_mark(files)
    git(linked, "commit", "-q", "--allow-empty", "-m", "on the side")
    assert state_mark(files) != mark  # the linked worktree's branch ref, in the common directory
    assert state_mark(state_files(str(repo))) == state_mark(state_files(str(repo)))
    (repo / ".git" / "HEAD").write_text("ref: refs/../../../outside\n")  # a hostile HEAD names a ref out of .git
    assert all(path.resolve().is_relative_to((repo / ".git").resolve()) for path in state_files(str(repo)))
    assert state_files(str(tmp_path)) == ()


class Gated(Feature):
    """A feature whose prompt block, read while the next chat is made ahead (its second read), waits at a gate."""

    def __init__(self) -> None:
        self.reads = 0
        self.gate = threading.Event()

    def prompt_block(self) -> str:
        self.reads += 1
        if self.reads == 2 and not self.gate.wait(GATE_SECONDS):
            raise TimeoutError("the gate was never opened")
        return ""


async def test_a_new_chat_does_not_wait_for_a_chat_being_made_ahead_that_an_edit_made_stale(repo: Path, scripted: ScriptedOpenAI) -> None:
    gated = Gated()
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    ws = Workspace(repo, counter=TokenCounter(), env=env, features=[gated], spare_chats=True)
    try:
        await ws.chat("one", emit=ignore)  # its answer starts the next chat's making, held at the gate
        await wait_until(lambda: gated.reads == 2)
        ws.document_changed(repo / "src" / "app.py")
        second = await asyncio.wait_for(ws.chat("two", emit=ignore), GATE_SECONDS)
        assert not gated.gate.is_set() and second.text and gated.reads == 3  # made its own, the held one still held
    finally:
        gated.gate.set()
        await ws.drain()
