"""Slow first uses never hold the event loop: the warm-up thread, and the folder's set-up git snapshot.

Proved by order, not by time. Each piece of work is held at a gate that only
the event loop opens, after it has done something else (answered a request,
delivered chunks of a streaming chat): if the work held the loop, the gate
would never open and the wait would give up (a hang detector, never the
assertion).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import as_dict, initialize, server_env, start_client, wait_for
from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.warmup import HTTP, NO_WARMUP, SHELL_PARSER, VOCABULARY, WATCHING, Step, Warmup, imports, server_steps
from qwen_lsp.workspace import Workspace

GATE_SECONDS = 30.0
"""Only reached when the loop is held (the failure these tests look for)."""


class Gate:
    """A step's work that waits until the loop opens it; records that it ran (and, given a model, its requests by then)."""

    def __init__(self, log: list[str], name: str, model: ScriptedOpenAI | None = None) -> None:
        self.event = threading.Event()
        self.log, self.name, self.model = log, name, model
        self.waited: bool | None = None

    def __call__(self) -> None:
        self.waited = self.event.wait(GATE_SECONDS)
        seen = f", {len(self.model.chat_requests())} model requests" if self.model is not None else ""
        self.log.append(f"{self.name} ran{seen}")


# ----------------------------------------------------------------- the mechanism


async def test_ready_waits_for_a_gated_step_while_the_loop_runs_on() -> None:
    order: list[str] = []
    gate = Gate(order, "step")
    warmup = Warmup([Step("step", gate)])
    warmup.start()
    waiting = asyncio.ensure_future(warmup.ready("step"))
    for _ in range(3):  # the loop goes on turning while the step is held
        await asyncio.sleep(0)
    order.append("loop ran")
    gate.event.set()  # opened by the loop: a held loop would never get here
    await asyncio.wait_for(waiting, GATE_SECONDS)
    order.append("ready")
    assert gate.waited is True
    assert order == ["loop ran", "step ran", "ready"]
    assert warmup.done("step")


async def test_steps_run_in_order_with_the_ones_before_initialize_first() -> None:
    order: list[str] = []
    steps = [Step(f"after-{i}", lambda i=i: order.append(f"after-{i}")) for i in range(3)]
    steps.insert(1, Step("first", lambda: order.append("first"), before_initialize=True))
    warmup = Warmup(steps)
    warmup.start()
    await asyncio.wait_for(warmup.initialized(), GATE_SECONDS)
    assert order[0] == "first"
    await asyncio.wait_for(warmup.ready("after-2"), GATE_SECONDS)
    assert order == ["first", "after-0", "after-1", "after-2"]


async def test_initialized_waits_for_the_gil_bound_steps_only() -> None:
    order: list[str] = []
    later = Gate(order, "later")
    warmup = Warmup([Step("vocabulary", lambda: order.append("vocabulary ran"), before_initialize=True), Step("later", later)])
    warmup.start()
    await asyncio.wait_for(warmup.initialized(), GATE_SECONDS)
    order.append("initialized")
    later.event.set()
    await asyncio.wait_for(warmup.ready("later"), GATE_SECONDS)
    assert order == ["vocabulary ran", "initialized", "later ran"]


async def test_a_failing_step_is_logged_and_counts_as_done(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> None:
        raise ImportError("no such module")

    warmup = Warmup([Step("broken", broken), Step("next", imports("json"))])
    with caplog.at_level(logging.WARNING, logger="qwen_lsp.warmup"):
        await asyncio.wait_for(warmup.ready("next"), GATE_SECONDS)  # ready() starts the thread if nobody did
    assert warmup.done("broken")
    assert any("broken" in r.getMessage() and "no such module" in r.getMessage() for r in caplog.records)


async def test_no_warmup_and_unknown_steps_are_ready_at_once() -> None:
    for name in (VOCABULARY, WATCHING, HTTP, "anything"):
        await asyncio.wait_for(NO_WARMUP.ready(name), 1)  # would hang, not fail slowly, if it waited
        assert NO_WARMUP.done(name)


def test_the_server_steps_load_the_vocabulary_first_and_import_what_the_loop_would() -> None:
    counter = TokenCounter()
    steps = server_steps(counter.load)
    assert [s.name for s in steps] == [VOCABULARY, WATCHING, HTTP, SHELL_PARSER]
    assert [s.before_initialize for s in steps] == [True, False, False, False]
    for step in steps:
        step.run()
    assert counter.loaded
    assert {"qwen_lsp.files.watching", "httpx", "anyio._backends._asyncio", "tree_sitter_bash"} <= set(sys.modules)


START_PROBE = """
import gc, sys
from qwen_lsp.background import defer_collections
defer_collections()
from qwen_lsp.server.handlers import create_server
imported_before_warmup = sorted(m for m in ("httpx", "watchdog", "tree_sitter_bash") if m in sys.modules)
create_server()
print(imported_before_warmup, gc.isenabled())
"""


def test_the_server_is_built_without_what_the_warm_up_imports_and_collects_again_after() -> None:
    """As ``qwen-lsp serve`` builds it: what the warm-up thread imports is not imported by the server's own
    modules (else ``initialize`` waits for it), and the collector that was off while the server was imported
    is on again once it is built (``background.py``)."""
    probe = subprocess.run([sys.executable, "-c", START_PROBE], capture_output=True, text=True, timeout=120, check=True)
    assert probe.stdout.split("\n")[0] == "[] True"


# ----------------------------------------------------------------- the workspace waits without holding the loop


async def test_watching_starts_after_its_gated_import_while_a_chat_streams(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    (first / ".git").mkdir(parents=True)
    (second / ".git").mkdir(parents=True)
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    order: list[str] = []
    gate = Gate(order, "watching import")
    warmup = Warmup([Step(WATCHING, gate)])
    chatting = await Workspace.open(first, counter=TokenCounter(), env=env)
    watched = await Workspace.open(second, counter=TokenCounter(), env=env, warmup=warmup)
    scripted.enqueue(Reply(chunks=[f"c{i} " for i in range(200)], delay=0.01))
    chunks = 0

    def emit(event: TurnEvent) -> None:
        nonlocal chunks
        if event.kind == "text":
            chunks += 1
            if chunks == 3:
                order.append("3 chunks")
                gate.event.set()

    try:
        watching = asyncio.ensure_future(watched.start_watching(asyncio.get_running_loop()))
        result = await asyncio.wait_for(chatting.chat("stream", emit=emit), GATE_SECONDS)
        await asyncio.wait_for(watching, GATE_SECONDS)
        order.append("watching")
    finally:
        await watched.drain()
        await chatting.drain()
    assert gate.waited is True
    assert order == ["3 chunks", "watching import ran", "watching"]
    assert "c199" in result.text


async def test_a_drain_during_the_start_waits_for_it_and_leaves_no_watcher_behind(home: Path, tmp_path: Path) -> None:
    """The editor's ``shutdown`` can come while ``initialized`` still starts the folder (held here at the watcher's
    import): the drain finishes that start first, so the watcher it makes is stopped too, not left running."""
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    order: list[str] = []
    gate = Gate(order, "watching import")
    workspace = await Workspace.open(tmp_path / "ws", counter=TokenCounter(), env={}, warmup=Warmup([Step(WATCHING, gate)]))
    starting = asyncio.ensure_future(workspace.start_watching(asyncio.get_running_loop()))
    draining = asyncio.ensure_future(workspace.drain())
    starting.add_done_callback(lambda _t: order.append("started"))
    draining.add_done_callback(lambda _t: order.append("drained"))
    for _ in range(50):
        await asyncio.sleep(0)
    order.append("gate opened")
    gate.event.set()
    await asyncio.wait_for(asyncio.gather(starting, draining), GATE_SECONDS)
    assert order == ["gate opened", "watching import ran", "started", "drained"]
    assert workspace._watcher is None  # stopped by the drain, after the start made it


async def test_the_first_model_request_waits_for_the_http_step_without_holding_the_loop(
    home: Path, tmp_path: Path, scripted: ScriptedOpenAI
) -> None:
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    order: list[str] = []
    gate = Gate(order, "http import", scripted)
    workspace = await Workspace.open(tmp_path / "ws", counter=TokenCounter(), env=env, warmup=Warmup([Step(HTTP, gate)]))
    scripted.enqueue(Reply(chunks=["done"]))
    try:
        chat = asyncio.ensure_future(workspace.chat("hello", emit=lambda _e: None))
        listed = await asyncio.wait_for(workspace.list_sessions(), GATE_SECONDS)  # other work goes on meanwhile
        for _ in range(50):  # and the chat gets every chance to reach its request
            await asyncio.sleep(0)
        order.append(f"sessions listed, {len(scripted.chat_requests())} model requests")
        gate.event.set()
        result = await asyncio.wait_for(chat, GATE_SECONDS)
    finally:
        await workspace.drain()
    assert listed.sessions is not None
    assert order == ["sessions listed, 0 model requests", "http import ran, 0 model requests"]
    assert result.text == "done" and len(scripted.chat_requests()) == 1


# ----------------------------------------------------------------- the set-up git snapshot, through the server


@pytest.fixture
def gated_git(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``(bin dir, release file, log)``: a ``git`` that logs its arguments, waits for the release file, then runs the real one."""
    real = shutil.which("git")
    assert real, "git is needed for this test"
    bindir, release, calls = tmp_path / "gatedbin", tmp_path / "release-git", tmp_path / "git-calls"
    bindir.mkdir()
    script = bindir / "git"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{calls}"\n'
        f"n=0; while [ ! -e \"{release}\" ] && [ $n -lt {int(GATE_SECONDS * 20)} ]; do sleep 0.05; n=$((n+1)); done\n"
        f'exec "{real}" "$@"\n'
    )
    script.chmod(0o755)
    return bindir, release, calls


@pytest.mark.skipif(os.name != "posix", reason="the gated git is a shell script")
async def test_the_first_chat_takes_the_set_up_snapshot_and_the_loop_answers_meanwhile(
    home: Path, tmp_path: Path, scripted: ScriptedOpenAI, gated_git: tuple[Path, Path, Path]
) -> None:
    bindir, release, calls = gated_git
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(repo), "add", "a.txt"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "first"], check=True)
    env = server_env(home, scripted.base_url, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
    client, _rec = await start_client(env)
    try:
        await initialize(client, repo)  # the set-up snapshot starts here, and is held at the gate
        await wait_for(lambda: calls.exists() and "status" in calls.read_text(), "the set-up snapshot's git status", GATE_SECONDS)
        chat = asyncio.ensure_future(client.protocol.send_request_async("qwen/chat", {"prompt": "hi"}))
        listed = as_dict(await asyncio.wait_for(client.protocol.send_request_async("qwen/skills/list", {}), GATE_SECONDS))
        assert "skills" in listed
        assert not release.exists() and not chat.done() and not scripted.chat_requests()
        release.write_text("")  # opened after the loop answered
        await asyncio.wait_for(chat, GATE_SECONDS)
        statuses_for_first = calls.read_text().count("status")
        second = asyncio.ensure_future(client.protocol.send_request_async("qwen/chat", {"prompt": "again"}))
        await asyncio.wait_for(second, GATE_SECONDS)
    finally:
        await client.shutdown_session()
        await client.stop()
    assert statuses_for_first == 1, calls.read_text()  # the first chat took the set-up snapshot, not one of its own
    # Each answer prepares the next new chat, its snapshot included (agent/new_chats.py): the second chat took
    # the one made after the first answer, and the one made after its own answer was waited for at shutdown.
    assert calls.read_text().count("status") == 3
    first_system = scripted.chat_requests()[0].body["messages"][0]["content"]
    assert "git: Current branch:" in first_system and "first" in first_system


# ----------------------------------------------------------------- the model client, built while the loop answers


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="the gate is a named pipe")
async def test_asking_for_the_client_while_it_is_built_never_holds_the_loop(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The set-up builds the model client; its CA bundle is a named pipe that opens only when the loop says so.

    A caller on the loop asking for the client meanwhile (a new chat's turn and its recall ask at once)
    used to wait for the build's lock on the loop itself.
    """
    import certifi

    bundle = tmp_path / "ca.pem"
    os.mkfifo(bundle)
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    order: list[str] = []
    building, release = threading.Event(), threading.Event()

    def releaser() -> None:
        with bundle.open("wb") as pipe:  # returns once the build opened the bundle: it holds the endpoint now
            building.set()
            order.append("released" if release.wait(GATE_SECONDS) else "released after the wait gave up")
            pipe.write(Path(certifi.where()).read_bytes())

    thread = threading.Thread(target=releaser, daemon=True)
    thread.start()
    env = {"OPENAI_BASE_URL": "https://127.0.0.1:9/v1", "OPENAI_API_KEY": "k", "OPENAI_MODEL": "m"}
    workspace = await Workspace.open(tmp_path / "ws", counter=TokenCounter(), env=env)
    try:
        assert await asyncio.to_thread(building.wait, GATE_SECONDS)
        asked = asyncio.ensure_future(workspace.model_client())
        for _ in range(20):
            await asyncio.sleep(0)
        order.append("loop ran")
        release.set()
        client = await asyncio.wait_for(asked, GATE_SECONDS)
        current = workspace.endpoint.current
    finally:
        release.set()
        await workspace.drain()
        thread.join(GATE_SECONDS)
    assert order == ["loop ran", "released"]
    assert client is current  # one client: the set-up's
