"""End to end: the server resumes a session the Qwen Code CLI compacted, and continues it.

The session file is the one the real CLI (0.24.4) wrote when it ran ``/compress``
(tests/data/sessions/qwen024_compressed.jsonl): three exchanges, then a
``chat_compression`` checkpoint whose ``compressedHistory`` is the summary and
the acknowledgement. Resuming must continue from the checkpoint, not the
original exchanges, and start from the checkpoint's token count.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import as_dict, chat, running_server, session_records
from qwen_lsp.files.paths import sanitize_cwd

CLI_SESSION = Path(__file__).parent / "data" / "sessions" / "qwen024_compressed.jsonl"
CLI_SESSION_ID = "ead73c12-fdfd-46e0-a1bb-16f9add5d47d"


def message_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [])


async def test_a_session_the_cli_compacted_resumes_and_continues_from_its_checkpoint(
    home: Path, tmp_path: Path, scripted: ScriptedOpenAI
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    chats = home / ".qwen" / "projects" / sanitize_cwd(workspace.resolve()) / "chats"
    chats.mkdir(parents=True)
    shutil.copyfile(CLI_SESSION, chats / f"{CLI_SESSION_ID}.jsonl")

    async with running_server(home, workspace, scripted.base_url) as lsp:
        resumed = as_dict(await lsp.protocol.send_request_async("qwen/sessions/resume", {"sessionId": CLI_SESSION_ID}))
        assert resumed["promptTokens"] == 5914  # info.newTokenCount of the checkpoint
        # The person sees the conversation as it happened (as the CLI shows it), not the summary the model continues from.
        assert [(m["role"], m["text"]) for m in resumed["messages"]] == [
            ("user", "say hi"), ("assistant", "hello from scripted"),
            ("user", "tell me more about things"), ("assistant", "hello from scripted"),
            ("user", "and more please"), ("assistant", "hello from scripted"),
        ]

        scripted.enqueue(Reply(chunks=["continuing"], usage={"prompt_tokens": 6100, "completion_tokens": 3, "total_tokens": 6103}))
        res = as_dict(await chat(lsp, "what next?", sessionId=CLI_SESSION_ID))
        assert res["text"] == "continuing"
        sent = [m for m in scripted.chat_requests()[-1].body["messages"] if m["role"] != "system"]
        texts = [message_text(m) for m in sent]
        assert any("Resume the prior task using the summary above." in t for t in texts)
        assert "Got it. Thanks for the additional context!" in texts
        assert "what next?" in texts[-1]
        assert not any(t.strip() in ("say hi", "tell me more about things", "and more please") for t in texts)
        roles = [m["role"] for m in sent]
        assert all(a != b for a, b in zip(roles, roles[1:]))

        # the new exchange hangs off the checkpoint, and a later resume counts from its answer
        records = session_records(home, CLI_SESSION_ID)
        checkpoint = next(r for r in records if r.get("subtype") == "chat_compression")
        after = records[records.index(checkpoint) + 1 :]
        assert after[0]["parentUuid"] == checkpoint["uuid"]
        again = as_dict(await lsp.protocol.send_request_async("qwen/sessions/resume", {"sessionId": CLI_SESSION_ID}))
        assert again["promptTokens"] == 6100
        assert [m["text"] for m in again["messages"]][-2:] == ["what next?", "continuing"]

        listed = as_dict(await lsp.protocol.send_request_async("qwen/sessions/list", {}))["sessions"]
        assert [(s["sessionId"], s["title"]) for s in listed] == [(CLI_SESSION_ID, "say hi")]


async def test_resuming_a_chat_with_history_returns_the_clis_session_recap(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    """As Qwen Code 0.24.4's generateSessionRecap: the dialog (no reminders, no tool turns, last 30 messages)
    plus one user request, a <recap> answer; a chat with no history gets no recap and costs no request."""
    workspace = tmp_path / "ws"
    workspace.mkdir()

    def route(body: dict) -> Reply:
        if "<recap>" in str(body["messages"][0].get("content")):
            return Reply(chunks=["<recap>Greeting the ", "scripted model. Next: ask for more.</recap>"])
        return Reply(chunks=["hello"])

    scripted.default = route
    async with running_server(home, workspace, scripted.base_url) as lsp:
        sid = as_dict(await chat(lsp, "say hi"))["sessionId"]
        before = len(scripted.chat_requests())
        resumed = as_dict(await lsp.protocol.send_request_async("qwen/sessions/resume", {"sessionId": sid}))
        assert resumed["recap"] == "Greeting the scripted model. Next: ask for more."
        [ask] = scripted.chat_requests()[before:]
        assert "tools" not in ask.body and ask.body["temperature"] == 0.3 and ask.body["max_tokens"] == 300
        sent = [(m["role"], message_text(m)) for m in ask.body["messages"][1:]]
        assert sent[:2] == [("user", "say hi"), ("assistant", "hello")]  # the startup reminders are cut out
        assert sent[-1][0] == "user" and "<recap>" in sent[-1][1] and len(sent) == 3
