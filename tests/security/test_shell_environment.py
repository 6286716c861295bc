"""Approved shell commands no longer inherit the endpoint's key in their environment."""

from __future__ import annotations

import json
from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, initialize, server_env, start_client
from qwen_lsp.agent.tools.run_shell import shell_environment


def test_the_environment_loses_the_key_under_every_name() -> None:
    environ = {"OPENAI_API_KEY": "k1", "DASHSCOPE_API_KEY": "k2", "COPY": "k1", "FROM_SETTINGS": "k3", "PATH": "/bin", "HOME": "/h"}
    assert shell_environment(environ, ["k3", None]) == {"PATH": "/bin", "HOME": "/h"}
    assert shell_environment({"PATH": "/bin", "EMPTY": ""}) == {"PATH": "/bin", "EMPTY": ""}


async def test_a_command_that_prints_its_environment_sends_no_key(tmp_path: Path, home: Path, scripted: ScriptedOpenAI) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("run_shell_command", {"command": "env; echo MARK=$HOME"}, id="s")]), Reply(chunks=["ok"]))
    client, _ = await start_client(server_env(home, scripted.base_url, DASHSCOPE_API_KEY="dash-key-5a1c", KEY_COPY="test-key"))
    try:
        await initialize(client, ws, {"tools": {"approvalMode": "yolo", "shell": {"enabled": True}}})
        assert as_dict(await chat(client, "show the environment"))["text"] == "ok"
    finally:
        await client.shutdown_session()
        await client.stop()
    body = scripted.chat_requests()[1].body
    answer = next(m["content"] for m in body["messages"] if m.get("role") == "tool")
    assert f"MARK={home}" in answer and "PATH=" in answer
    assert "test-key" not in json.dumps(body) and "dash-key-5a1c" not in json.dumps(body)
    assert scripted.chat_requests()[1].headers["authorization"] == "Bearer test-key"  # the endpoint still gets it
