"""Two chats in one workspace, through the real server: each keeps its own context state.

Git snapshot, environment prelude and conditional-rule injections belong to
one chat (Qwen Code has one process per session); a second chat must not
change the first one's system-prompt bytes or take its rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from support.rules_repo import git, make_rules_repo
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import as_dict, chat, running_server
from test_server_skills_context_e2e import open_doc, user_texts, wait_for


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_rules_repo(tmp_path / "ws")


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    async with running_server(home, workspace, scripted.base_url) as client:
        yield client


def last_request(scripted: ScriptedOpenAI) -> dict:
    return scripted.chat_requests()[-1].body


async def test_two_chats_never_share_snapshot_or_rules(lsp, scripted: ScriptedOpenAI, workspace: Path) -> None:
    a = as_dict(await chat(lsp, "A one"))["sessionId"]
    a_system = last_request(scripted)["messages"][0]
    assert "first commit" in a_system["content"]

    git(workspace, "commit", "-q", "--allow-empty", "-m", "second commit")
    open_doc(lsp, workspace / "src" / "app.py")
    await wait_for(lambda: any(".qwen/rules/py.md" in as_dict(c)["activated"] for c in lsp.rec.skills_changed), "rule one announced")

    b = as_dict(await chat(lsp, "B one"))["sessionId"]
    assert b != a
    b_first = last_request(scripted)
    assert "second commit" in b_first["messages"][0]["content"]  # B took its own snapshot
    assert any("PY RULE" in t for t in user_texts(b_first))  # the open file counts for a new chat too

    await chat(lsp, "A two", sessionId=a)
    a_second = last_request(scripted)
    assert a_second["messages"][0] == a_system  # same bytes: B's start changed nothing of A's
    assert any("PY RULE" in t for t in user_texts(a_second))  # the editor's file reached A as well

    # B's tool reads a JS file: rule two belongs to B alone.
    scripted.enqueue(Reply(tool_calls=[ToolCallSpec("read_file", {"file_path": str(workspace / "lib" / "util.js")})]))
    scripted.enqueue(Reply(chunks=["read it"]))
    await chat(lsp, "B two", sessionId=b)
    await chat(lsp, "B three", sessionId=b)
    assert any("JS RULE" in t for t in user_texts(last_request(scripted)))

    await chat(lsp, "A three", sessionId=a)
    a_third = last_request(scripted)
    assert not any("JS RULE" in t for t in user_texts(a_third))
    assert a_third["messages"][0] == a_system


async def test_turns_and_chats_share_one_model_connection(lsp, scripted: ScriptedOpenAI) -> None:
    """The server reads each model stream to its end, so its turns reuse one keep-alive connection
    (a new one per turn is a TLS handshake against a real provider)."""
    a = as_dict(await chat(lsp, "one"))["sessionId"]
    await chat(lsp, "two", sessionId=a)
    await chat(lsp, "three")
    assert len(scripted.chat_requests()) == 3
    assert scripted.connections == 1
