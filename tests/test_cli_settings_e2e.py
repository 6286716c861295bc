"""Qwen Code 0.24.4's settings and limits over LSP: only ``~/.qwen/settings.json``, written the CLI's way.

Each test starts the real server with HOME at a scratch directory whose
settings file uses the CLI's key names (``docs/interop.md`` lists them),
talks to it over stdio and counts what reached the scripted endpoint.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types
from support.quiet_home import write_quiet_settings
from support.scripted_openai import ScriptedOpenAI

from lsp_harness import as_dict, chat, initialize, server_env, start_client, wait_for


@asynccontextmanager
async def server(home: Path, workspace: Path, scripted: ScriptedOpenAI, model: str = "scripted-model") -> AsyncIterator[Any]:
    """The server with only the user's settings file (no editor settings) and ``OPENAI_MODEL=model``."""
    client, rec = await start_client(server_env(home, scripted.base_url, OPENAI_MODEL=model))
    try:
        await initialize(client, workspace, None)
        client.rec = rec
        yield client
    finally:
        await client.shutdown_session()  # drains background work: request counts are final after this
        await client.stop()


def user_settings(home: Path, extra: dict[str, Any]) -> None:
    write_quiet_settings(home, extra)


async def last_status(client: Any) -> dict[str, Any]:
    await wait_for(lambda: client.rec.context_status, "qwen/contextStatus")
    return as_dict(client.rec.context_status[-1])


async def test_context_status_shows_the_clis_window_and_thresholds_for_qwen3_coder_plus(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    """1,000,000 tokens from 0.24.4's table; auto = min(0.85·w, w − 33000) = 850,000 (the CLI's figure)."""
    async with server(home, tmp_path, scripted, model="qwen3-coder-plus") as client:
        await chat(client, "hello")
        status = await last_status(client)
        assert status["window"] == 1_000_000
        assert status["thresholds"] == {"warn": 830_000, "auto": 850_000, "hard": 977_000}
        report = as_dict(await client.protocol.send_request_async("qwen/context", {}))
        assert report["window"] == 1_000_000 and report["thresholds"] == status["thresholds"]


async def test_an_unknown_model_gets_the_clis_default_window(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    """200,000 tokens (0.24.4's DEFAULT_TOKEN_LIMIT): auto = min(170,000, 167,000)."""
    async with server(home, tmp_path, scripted) as client:
        await chat(client, "hello")
        status = await last_status(client)
        assert status["window"] == 200_000
        assert status["thresholds"] == {"warn": 147_000, "auto": 167_000, "hard": 177_000}


async def test_the_clis_window_and_threshold_keys_in_the_users_file(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    user_settings(home, {"model": {"generationConfig": {"contextWindowSize": 500_000}}, "context": {"autoCompactThreshold": 0.5}})
    async with server(home, tmp_path, scripted, model="qwen3-coder-plus") as client:
        await chat(client, "hello")
        status = await last_status(client)
        assert status["window"] == 500_000
        assert status["thresholds"] == {"warn": 230_000, "auto": 250_000, "hard": 477_000}


EXTRACTION_MARK = "If nothing durable should be saved"


def extraction_requests(scripted: ScriptedOpenAI) -> list[str]:
    """Each memory-extraction request the endpoint received (its messages as JSON text)."""
    texts = [json.dumps(r.body["messages"], ensure_ascii=False) for r in scripted.chat_requests()]
    return [t for t in texts if EXTRACTION_MARK in t]


async def test_managed_memory_off_in_the_users_file_means_no_extraction_request(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    """``memory.enableManagedAutoMemory: false`` (0.24.4's switch) in ~/.qwen/settings.json: the turn is not mined.

    The barrier that makes "none" provable: extraction runs one at a time, in
    the order turns end. Turn 2 runs with memory switched back on by the
    editor (a higher layer), so its extraction request arrives only after any
    extraction turn 1 might have started; exactly one means turn 1 had none.
    """
    user_settings(home, {"memory": {"enableManagedAutoMemory": False}})  # autoExtract: default (on) — the CLI key decides
    async with server(home, tmp_path, scripted) as client:
        sid = as_dict(await chat(client, "I always want tabs in Makefiles."))["sessionId"]
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"qwen": {"memory": {"enabled": True, "autoExtract": True}}}))
        await chat(client, "And spaces in Python files.", sessionId=sid)
        await wait_for(lambda: extraction_requests(scripted), "the extraction request of turn 2")
        found = extraction_requests(scripted)
        assert len(found) == 1
        assert "spaces in Python" in found[0]
