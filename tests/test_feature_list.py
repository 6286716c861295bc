"""Features register themselves (docs/architecture.md, "Adding a feature").

The example feature (``tests/support/example_feature``) is one package and one
entry in the feature list: here it is added to the list and nothing else, and
its tool reaches the model, its per-chat state follows each chat, and its
``qwen/*`` request is registered, advertised and routed by the real server over
stdio. The product's own list is checked too: every feature package under
``qwen_lsp/features`` exports a ``FEATURE`` and is in the list exactly once.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from pathlib import Path

import pytest
from pytest_lsp import ClientServerConfig

from support.example_feature import FEATURE as EXAMPLE
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

import qwen_lsp.features
from qwen_lsp.agent.events import TurnEvent
from qwen_lsp.features.catalog import FEATURES
from qwen_lsp.llm.tokens import TokenCounter
from qwen_lsp.workspace import Workspace

from lsp_harness import as_dict, chat, initialize, server_env

EXAMPLE_SERVER = Path(__file__).resolve().parent / "support" / "example_server.py"


NO_BACKGROUND = {"memory": {"enabled": False}}


def ignore(_event: TurnEvent) -> None:
    pass


def test_every_feature_package_is_in_the_list_once() -> None:
    packages = sorted(m.name for m in pkgutil.iter_modules(qwen_lsp.features.__path__) if m.ispkg)
    exported = [importlib.import_module(f"qwen_lsp.features.{name}").FEATURE for name in packages]
    assert sorted(f.name for f in exported) == sorted(f.name for f in FEATURES)
    assert len({f.name for f in FEATURES}) == len(FEATURES)
    assert all(f in FEATURES for f in exported)


def test_no_two_features_answer_the_same_method() -> None:
    methods = [m for f in FEATURES for m in f.methods()]
    assert len(methods) == len(set(methods))


def _tool_results(scripted: ScriptedOpenAI) -> list[str]:
    """What ``count_turns`` answered, in every request the endpoint got."""
    return [m["content"] for r in scripted.chat_requests() for m in r.body["messages"] if m["role"] == "tool"]


async def test_the_example_feature_runs_in_a_workspace(tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    env = {"OPENAI_BASE_URL": scripted.base_url, "OPENAI_API_KEY": "k", "OPENAI_MODEL": "scripted-model"}
    # Memory extraction off: its background request would take a scripted reply meant for the chat.
    ws = Workspace(tmp_path, counter=TokenCounter(), env=env, modules=(*FEATURES, EXAMPLE), client_settings=NO_BACKGROUND)
    try:
        scripted.enqueue(Reply(chunks=["first"]), Reply(chunks=[], tool_calls=[ToolCallSpec("count_turns")]), Reply(chunks=["done"]))
        first = await ws.chat("one", emit=ignore)
        await ws.chat("two", session_id=first.session_id, emit=ignore)
        requests = scripted.chat_requests()
        assert "count_turns" in [t["function"]["name"] for t in requests[0].body["tools"]]
        assert set(_tool_results(scripted)) == {"1 turns answered so far."}
        scripted.enqueue(Reply(chunks=["x"]))
        other = await ws.chat("elsewhere", emit=ignore)
        assert other.session_id != first.session_id
        handler = ws.handlers["qwen/example/turns"]
        assert (await handler(EXAMPLE.requests[0].params(sessionId=first.session_id), None)).turns == 2
        assert (await handler(EXAMPLE.requests[0].params(sessionId=other.session_id), None)).turns == 1  # its own count
    finally:
        await ws.drain()


async def test_the_server_registers_advertises_and_routes_the_example_feature(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("count_turns")]), Reply(chunks=["counted"]))
    client = await ClientServerConfig(server_command=[sys.executable, str(EXAMPLE_SERVER)], server_env=server_env(home, scripted.base_url)).start()
    try:
        result = await initialize(client, ws, None)
        assert "qwen/example/turns" in result.capabilities.experimental["qwen"]["methods"]
        answered = as_dict(await chat(client, "count please"))
        assert answered["text"] == "counted"
        assert set(_tool_results(scripted)) == {"0 turns answered so far."}
        turns = as_dict(await client.protocol.send_request_async("qwen/example/turns", {"sessionId": answered["sessionId"]}))
        assert turns == {"turns": 1}
        with pytest.raises(Exception, match="sessionId"):
            await client.protocol.send_request_async("qwen/example/turns", {"sessionId": ""})
    finally:
        await client.shutdown_session()
        await client.stop()
    assert "count_turns" in json.dumps(scripted.chat_requests()[0].body["tools"])


async def test_the_product_server_does_not_know_the_example(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    """Without the line in the list, the example is not there: the list is the only place it is named."""
    from lsp_harness import start_client

    ws = tmp_path / "ws"
    ws.mkdir()
    client, _rec = await start_client(server_env(home, scripted.base_url))
    try:
        result = await initialize(client, ws, None)
        assert "qwen/example/turns" not in result.capabilities.experimental["qwen"]["methods"]
        with pytest.raises(Exception, match="(?i)method not found|unknown method|not found"):
            await client.protocol.send_request_async("qwen/example/turns", {"sessionId": "x"})
    finally:
        await client.shutdown_session()
        await client.stop()
