"""A failed turn's Retry and an editor chat across a server restart: the real server over stdio, the scripted
model over real HTTP/SSE.

Retry sends the failed prompt again with ``retry: true``; the failed turn is taken off the session file's
active branch, so the model gets the prompt once and a reopened chat shows it once, with the new answer. A
restarted server continues the editor's chat by its id, also one whose only turn never reached the model.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from support.scripted_openai import HttpError, Reply, ScriptedOpenAI

from lsp_harness import as_dict, chat, running_server

OPTIONS = {"memory": {"autoExtract": False, "autoDream": False}}
PROMPT = "explain the retry test"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    return ws


def user_texts(request: Any) -> list[str]:
    """The user messages' texts of one recorded model request."""
    out = []
    for m in request.body["messages"]:
        if m["role"] != "user":
            continue
        content = m["content"]
        out.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content if isinstance(p, dict)))
    return out


async def failed_turn(client: Any, scripted: ScriptedOpenAI, **params: Any) -> None:
    scripted.enqueue(HttpError(400, "The scripted model refuses this once"))
    with pytest.raises(JsonRpcException, match="refuses this once"):
        await chat(client, PROMPT, **params)


async def resume(client: Any, session_id: str) -> list[dict[str, Any]]:
    r = as_dict(await client.protocol.send_request_async("qwen/sessions/resume", {"sessionId": session_id, "recap": False}))
    return [{k: v for k, v in m.items() if v is not None} for m in r["messages"]]


async def test_retry_takes_the_failed_turn_back_so_the_prompt_is_sent_and_shown_once(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    async with running_server(home, workspace, scripted.base_url, OPTIONS) as client:
        scripted.enqueue(Reply(chunks=["first answer"]))
        sid = as_dict(await chat(client, "hello"))["sessionId"]
        await failed_turn(client, scripted, sessionId=sid)
        assert [m["role"] for m in await resume(client, sid)][-2:] == ["user", "assistant"]  # the failed turn, with its error
        scripted.enqueue(Reply(chunks=["the retried answer"]))
        r = as_dict(await chat(client, PROMPT, sessionId=sid, retry=True))
        assert r["text"] == "the retried answer"
        sent = scripted.chat_requests()[-1]
        assert sum(PROMPT in t for t in user_texts(sent)) == 1, user_texts(sent)
        shown = await resume(client, sid)
    assert [(m["role"], m["text"]) for m in shown] == [("user", "hello"), ("assistant", "first answer"), ("user", PROMPT), ("assistant", "the retried answer")]
    assert not any("error" in m for m in shown)


async def test_a_retry_after_a_server_restart_and_a_retry_of_a_first_turn(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    async with running_server(home, workspace, scripted.base_url, OPTIONS) as client:
        await failed_turn(client, scripted)
        sid = as_dict(client.rec.chat_events[-1])["sessionId"]  # the failed turn's events name its chat
    # A new server (Qwen: Restart Server): the chat is resumed from disk by its id, and Retry takes the turn back there.
    async with running_server(home, workspace, scripted.base_url, OPTIONS) as client:
        scripted.enqueue(Reply(chunks=["answered after the restart"]))
        r = as_dict(await chat(client, PROMPT, sessionId=sid, retry=True))
        assert (r["sessionId"], r["text"]) == (sid, "answered after the restart")
        assert sum(PROMPT in t for t in user_texts(scripted.chat_requests()[-1])) == 1
        assert [(m["role"], m["text"]) for m in await resume(client, sid)] == [("user", PROMPT), ("assistant", "answered after the restart")]


async def test_retry_without_a_failed_turn_takes_nothing_back(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    """A Retry that arrives after the turn was answered elsewhere (another window) must not drop that answer."""
    async with running_server(home, workspace, scripted.base_url, OPTIONS) as client:
        scripted.enqueue(Reply(chunks=["kept"]))
        sid = as_dict(await chat(client, "keep me"))["sessionId"]
        scripted.enqueue(Reply(chunks=["second"]))
        await chat(client, "again", sessionId=sid, retry=True)
        assert [(m["role"], m["text"]) for m in await resume(client, sid)] == [("user", "keep me"), ("assistant", "kept"), ("user", "again"), ("assistant", "second")]


async def test_an_editor_chat_with_nothing_saved_keeps_its_id_after_a_restart(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    """A chat whose id the editor holds but whose turns never reached the model has no file: no "No session"."""
    sid = str(uuid.uuid4())
    async with running_server(home, workspace, scripted.base_url, OPTIONS) as client:
        context = as_dict(await client.protocol.send_request_async("qwen/context", {"sessionId": sid}))
        assert context["totalTokens"] > 0
        scripted.enqueue(Reply(chunks=["hello there"]))
        r = as_dict(await chat(client, "first words", sessionId=sid))
        assert (r["sessionId"], r["text"]) == (sid, "hello there")
        assert [(m["role"], m["text"]) for m in await resume(client, sid)] == [("user", "first words"), ("assistant", "hello there")]
        # Resuming an id that was never saved still says so: that is the user asking for a chat that is not there.
        with pytest.raises(JsonRpcException, match="No session"):
            await client.protocol.send_request_async("qwen/sessions/resume", {"sessionId": str(uuid.uuid4())})
