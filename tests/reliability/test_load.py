"""20 chats streaming at once through one server: no event lost, duplicated, reordered or crossed into another chat.

The scripted model answers each chat with text only that chat's stream may
carry (``chat-N`` pieces, numbered), chunks a millisecond apart so the 20
streams interleave. Per turn, ``seq`` must run 0, 1, 2, … and the text events
must reassemble exactly the chat's answer. Latency is ``bench/load_streams.py``'s
business; nothing here is timed.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from support.raw_peer import RawPeer
from support.scripted_openai import Reply, ScriptedOpenAI

from qwen_lsp.sessions.recording import SessionRecorder, wait_for_syncs

CHATS = 20
PIECES = 60
TURNS = 2


def answer_for(chat: int, turn: int) -> list[str]:
    return [f"chat-{chat}/turn-{turn}/piece-{i:03d}|" for i in range(PIECES)]


def scripted_reply(body: dict[str, Any]) -> Reply:
    """The answer for the ``chat N turn T`` named in the request's last message."""
    found = re.search(r"chat (\d+) turn (\d+)", json.dumps(body.get("messages", [])[-1:]))
    assert found, body
    return Reply(chunks=answer_for(int(found[1]), int(found[2])), delay=0.001)


def test_twenty_concurrent_streams_lose_and_reorder_nothing(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    with ScriptedOpenAI(default=scripted_reply) as model:
        peer = RawPeer(tmp_path / "home", tmp_path / "ws", env=dict(OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="k", OPENAI_MODEL="m"))
        try:
            sessions: dict[int, str] = {}
            for turn in range(TURNS):
                ids = {}
                for chat in range(CHATS):  # all sent before any answer is read: the 20 turns run at once
                    ids[chat] = msg_id = 1000 * (turn + 1) + chat
                    params = {"prompt": f"chat {chat} turn {turn}", **({"sessionId": sessions[chat]} if chat in sessions else {})}
                    peer.request(msg_id, "qwen/chat", params)
                results = {chat: peer.response(msg_id)["result"] for chat, msg_id in ids.items()}
                peer.request(1, "qwen/skills/list")  # notifications sent before this answer are all read by then
                assert "result" in peer.response(1)
                for chat, result in results.items():
                    sessions.setdefault(chat, result["sessionId"])
                    assert result["sessionId"] == sessions[chat]
                    expected = "".join(answer_for(chat, turn))
                    assert result["text"] == expected
                    events = [n["params"] for n in peer.notifications
                              if n["method"] == "qwen/chatEvent" and n["params"]["turnId"] == result["turnId"]]
                    assert all(e["sessionId"] == sessions[chat] for e in events)
                    assert [e["seq"] for e in events] == list(range(len(events))), f"chat {chat}: a gap or a reorder"
                    assert "".join(e["text"] for e in events if e["kind"] == "text") == expected, f"chat {chat}: text lost or mixed"
            assert len(set(sessions.values())) == CHATS
            assert len(model.chat_requests()) == CHATS * TURNS
            assert "Traceback" not in peer.stderr()
        finally:
            peer.close()


def test_session_records_are_fsynced_off_the_event_loop(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: each record's fsync ran on the caller's thread — the event loop — so 20 chats ending turns stalled every stream.

    ``os.fsync`` is wrapped only to see which thread calls it; the real one still runs.
    """
    real_fsync = os.fsync
    callers: list[str] = []

    def spying_fsync(fd: int) -> None:
        callers.append(threading.current_thread().name)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spying_fsync)
    recorder = SessionRecorder(tmp_path / "project", version="0.1.0")
    for i in range(5):
        recorder.record_user(f"message {i}")
    wait_for_syncs(timeout=30)  # all five are done
    assert len(callers) == 5 and all(name.startswith("session-fsync") for name in callers), callers
    assert recorder.path.read_text().count('"type":"user"') == 5
