"""kill -9 in the middle of a streamed answer: the part the user already saw survives, marked interrupted.

Before the streamed text was saved in pieces (``sessions.draft``), the
resumed session had the question and not a word of the answer.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI

from lsp_harness import server_env
from reliability.lsp_process import ServerGone, ServerProcess

WORDS = [f"word{i:03d} " for i in range(400)]


async def wait_until(predicate, what: str, timeout: float = 30.0) -> None:
    """Poll; ``timeout`` detects a hang, it is never a claim about speed."""
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def session_lines(home: Path, session_id: str) -> list[dict]:
    [path] = (home / ".qwen" / "projects").glob(f"*/chats/{session_id}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def test_kill_9_mid_answer_keeps_the_streamed_text_and_resume_shows_it_interrupted(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = server_env(home, scripted.base_url)
    scripted.enqueue(Reply(chunks=WORDS, delay=0.02))  # 8 s of answer: the kill lands well inside it

    server = await ServerProcess.start(env, workspace)
    pending = server.send_request("qwen/chat", {"prompt": "tell me a long story"})
    await wait_until(lambda: server.chat_texts().count("word") >= 120, "about 120 words on screen")
    # what is on screen now has had ≥ 1 s (the save interval) since the first ~70 words; wait one more interval
    await asyncio.sleep(1.2)
    seen = server.chat_texts()
    await server.kill()
    try:
        await pending
    except ServerGone:
        pass
    session_id = next(p["sessionId"] for m, p in server.notifications if m == "qwen/chatEvent" and p.get("sessionId"))

    lines = session_lines(home, session_id)
    assert lines[0]["type"] == "user"
    pieces = [r for r in lines if r["type"] == "assistant"]
    assert pieces and all(r["interrupted"] is True and r["parentUuid"] == lines[0]["uuid"] for r in pieces)
    assert len({r["uuid"] for r in pieces}) == 1  # pieces of one answer
    saved = "".join(p["text"] for r in pieces for p in r["message"]["parts"])
    assert seen.startswith(saved) and saved.count("word") >= 60

    restarted = await ServerProcess.start(env, workspace)
    try:
        resumed = await restarted.request("qwen/sessions/resume", {"sessionId": session_id})
        assert [m["role"] for m in resumed["messages"]] == ["user", "assistant"]
        assert resumed["messages"][1]["text"] == saved

        # the next turn continues after the partial answer, which the model sees once, as one message
        scripted.enqueue(Reply(chunks=["Continuing."]))
        result = await restarted.request("qwen/chat", {"prompt": "go on", "sessionId": session_id})
        assert result["text"] == "Continuing."
        sent = [m for m in scripted.chat_requests()[-1].body["messages"] if m["role"] != "system"]
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        assert sent[1]["content"] == saved
    finally:
        await restarted.close()

    lines = session_lines(home, session_id)
    final = [r for r in lines if r["type"] == "assistant"][-1]
    assert final["message"]["parts"] == [{"text": "Continuing."}] and "interrupted" not in final


async def test_a_completed_answer_after_its_pieces_reads_back_once(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    """The round's final record supersedes its pieces: one answer on resume, for us and for Qwen Code's reader."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = server_env(home, scripted.base_url)
    scripted.enqueue(Reply(chunks=WORDS[:120], delay=0.02))  # 2.4 s: at least one piece is saved before the end
    server = await ServerProcess.start(env, workspace)
    try:
        result = await server.request("qwen/chat", {"prompt": "a story"})
        session_id = result["sessionId"]
        resumed = await server.request("qwen/sessions/resume", {"sessionId": session_id})
    finally:
        await server.close()
    lines = session_lines(home, session_id)
    pieces = [r for r in lines if r.get("interrupted")]
    final = lines[-1]
    assert pieces, "the slow answer was saved in pieces while it streamed"
    assert final["type"] == "assistant" and "interrupted" not in final and final["parentUuid"] == pieces[0]["parentUuid"]
    assert final["uuid"] != pieces[0]["uuid"]
    assert [m["text"] for m in resumed["messages"]] == ["a story", "".join(WORDS[:120])]
