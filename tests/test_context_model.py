"""``qwen/context`` names the model the next request would go to, and none while no turn could run.

The editor shows its "% left" figure only for a configured model (a window size for no model would be
made up); both cases through the real server, configured by the environment as a user would.
"""

from __future__ import annotations

from pathlib import Path

from support.scripted_openai import ScriptedOpenAI

from lsp_harness import as_dict, running_server


async def test_context_names_the_configured_model(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    async with running_server(home, tmp_path, scripted.base_url) as client:
        res = as_dict(await client.protocol.send_request_async("qwen/context", {}))
    assert res["model"] == "scripted-model"


async def test_context_without_a_model_names_none(home: Path, tmp_path: Path) -> None:
    async with running_server(home, tmp_path, None) as client:
        res = as_dict(await client.protocol.send_request_async("qwen/context", {}))
    assert "model" not in res
    assert res["totalTokens"] == sum(s["tokens"] for s in res["sections"])


async def test_a_model_name_alone_without_endpoint_or_key_is_not_configured(home: Path, tmp_path: Path) -> None:
    (home / ".qwen").mkdir(exist_ok=True)
    (home / ".qwen" / "settings.json").write_text('{"model": {"name": "qwen3-coder-plus"}}')
    async with running_server(home, tmp_path, None) as client:
        res = as_dict(await client.protocol.send_request_async("qwen/context", {}))
    assert "model" not in res
