"""End-to-end over LSP: what the editor shows reaches the model as Qwen Code 0.24.4's editor-context reminder."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import as_dict, chat, open_doc, running_server

FULL = "Here is the user's current editor context."
DELTA = "Here is a summary of changes in the user's current editor context."


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "a.py").write_text("import os\n")
    (ws / "b.py").write_text("def f():\n    x = 1\n    return x\n# end\n")
    (ws / "c.py").write_text("C = 3\n")
    (ws / ".qwenignore").write_text("secret.txt\n")
    (ws / "secret.txt").write_text("TOKEN-123\n")
    (tmp_path / "outside.py").write_text("OUTSIDE = 1\n")
    return ws


@pytest_asyncio.fixture
async def lsp(home: Path, workspace: Path, scripted: ScriptedOpenAI):
    async with running_server(home, workspace, scripted.base_url) as client:
        yield client


def focus(client, path: Path | None, cursor: tuple[int, int] = (0, 0), selection=None) -> None:
    params: dict = {}
    if path is not None:
        active: dict = {"uri": path.as_uri(), "cursor": {"line": cursor[0], "character": cursor[1]}}
        if selection is not None:
            (sl, sc), (el, ec) = selection
            active["selection"] = {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}
        params["activeFile"] = active
    client.protocol.notify("qwen/editorContext", params)


def close_doc(client, path: Path) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri())))


def user_texts(body: dict) -> list[str]:
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    return [content] if isinstance(content, str) else [p["text"] for p in content]


def system_of(body: dict) -> str:
    return body["messages"][0]["content"]


def editor_parts(body: dict) -> list[str]:
    return [t for t in user_texts(body) if FULL in t or DELTA in t]


async def test_first_turn_whole_then_changes_then_nothing(lsp, scripted, workspace):
    a, b, c = workspace / "a.py", workspace / "b.py", workspace / "c.py"
    open_doc(lsp, a)
    open_doc(lsp, b)
    focus(lsp, b, cursor=(2, 4), selection=((1, 0), (3, 0)))  # lines 2-3 selected
    first = as_dict(await chat(lsp, "is this right?"))
    req1 = scripted.chat_requests()[-1].body
    parts = editor_parts(req1)
    assert parts == [
        "<system-reminder>\n"
        "Here is the user's current editor context. Use it when relevant, including to answer questions about the "
        "active file, open files, cursor, or selected text.\n"
        "Active file:\n"
        f"  Path: {b}\n"
        "  Cursor: line 3, character 4\n"
        "  Selected text:\n"
        "```\n"
        "    x = 1\n    return x\n\n"
        "```\n"
        "\n"
        "Other open files:\n"
        f"  - {a}\n"
        "</system-reminder>"
    ]
    texts = user_texts(req1)
    assert texts.index(parts[0]) == len(texts) - 2 and texts[-1] == "is this right?"  # rides right before the user's text

    close_doc(lsp, a)
    open_doc(lsp, c)
    focus(lsp, b, cursor=(2, 4), selection=((1, 0), (3, 0)))  # focus back on b.py, unchanged
    await chat(lsp, "and now?", sessionId=first["sessionId"])
    req2 = scripted.chat_requests()[-1].body
    assert editor_parts(req2) == [
        "<system-reminder>\n"
        "Here is a summary of changes in the user's current editor context. Use it with the previous editor context "
        "when relevant, including to answer questions about the active file, open files, cursor, or selected text.\n"
        "Files opened:\n"
        f"  - {c}\n"
        "\n"
        "Files closed:\n"
        f"  - {a}\n"
        "</system-reminder>"
    ]

    await chat(lsp, "thanks", sessionId=first["sessionId"])
    req3 = scripted.chat_requests()[-1].body
    assert editor_parts(req3) == []
    assert system_of(req1) == system_of(req2) == system_of(req3)
    assert req1["tools"] == req2["tools"] == req3["tools"]


async def test_leaving_it_out_is_for_that_message_only(lsp, scripted, workspace):
    b = workspace / "b.py"
    open_doc(lsp, b)
    focus(lsp, b, cursor=(0, 0), selection=((0, 0), (0, 3)))
    first = as_dict(await chat(lsp, "general question", editorContext=False))
    assert editor_parts(scripted.chat_requests()[-1].body) == []
    await chat(lsp, "about this?", sessionId=first["sessionId"])
    parts = editor_parts(scripted.chat_requests()[-1].body)
    assert len(parts) == 1 and FULL in parts[0] and "```\ndef\n```" in parts[0]


async def test_outside_and_ignored_files_are_never_named(lsp, scripted, workspace):
    outside = workspace.parent / "outside.py"
    secret = workspace / "secret.txt"
    open_doc(lsp, outside)
    open_doc(lsp, secret, "plaintext")
    open_doc(lsp, workspace / "a.py")
    focus(lsp, secret, selection=((0, 0), (0, 9)))
    await chat(lsp, "what is open?")
    body = scripted.chat_requests()[-1].body
    joined = "\n".join(editor_parts(body))
    assert "TOKEN" not in "\n".join(user_texts(body))
    assert "TOKEN" not in joined and "outside.py" not in joined and "secret.txt" not in joined
    assert f"Other open files:\n  - {workspace / 'a.py'}" in joined


async def test_setting_off_sends_nothing(home, workspace, scripted):
    async with running_server(home, workspace, scripted.base_url, {"qwen": {"editorContext": {"enabled": False}}}) as client:
        open_doc(client, workspace / "a.py")
        focus(client, workspace / "a.py")
        await chat(client, "hi")
        assert editor_parts(scripted.chat_requests()[-1].body) == []


async def test_a_malformed_notification_is_ignored_and_the_server_goes_on(lsp, scripted, workspace):
    lsp.protocol.notify("qwen/editorContext", {"activeFile": {"uri": 5, "cursor": {"line": -1}}})
    lsp.protocol.notify("qwen/editorContext", [1, 2])
    open_doc(lsp, workspace / "a.py")
    await chat(lsp, "still here?")
    assert FULL in "\n".join(user_texts(scripted.chat_requests()[-1].body))


async def test_the_context_inspector_counts_what_the_next_message_carries(lsp, scripted, workspace):
    open_doc(lsp, workspace / "b.py")
    focus(lsp, workspace / "b.py", selection=((0, 0), (3, 0)))
    report = as_dict(await lsp.protocol.send_request_async("qwen/context", {}))
    editor = [s for s in report["sections"] if s["name"] == "editor context"]
    assert len(editor) == 1 and editor[0]["tokens"] > 10


async def test_after_a_compression_the_whole_context_is_told_again(lsp, scripted, workspace):
    open_doc(lsp, workspace / "a.py")
    first = as_dict(await chat(lsp, "one"))
    await chat(lsp, "two", sessionId=first["sessionId"])
    assert editor_parts(scripted.chat_requests()[-1].body) == []
    scripted.enqueue(Reply(chunks=["<analysis>draft</analysis><state_snapshot>the user said one, two</state_snapshot>"]))
    done = as_dict(await lsp.protocol.send_request_async("qwen/compress", {"sessionId": first["sessionId"]}))
    assert done["status"] == "compressed"
    await chat(lsp, "three", sessionId=first["sessionId"])
    parts = editor_parts(scripted.chat_requests()[-1].body)
    assert len(parts) == 1 and FULL in parts[0]


async def test_a_resumed_chat_is_told_the_whole_context_again(home, workspace, scripted):
    async with running_server(home, workspace, scripted.base_url) as client:
        open_doc(client, workspace / "a.py")
        first = as_dict(await chat(client, "one"))
    async with running_server(home, workspace, scripted.base_url) as client:
        open_doc(client, workspace / "a.py")
        await client.protocol.send_request_async("qwen/sessions/resume", {"sessionId": first["sessionId"]})
        await chat(client, "two", sessionId=first["sessionId"])
        parts = editor_parts(scripted.chat_requests()[-1].body)
        assert len(parts) == 1 and FULL in parts[0]
