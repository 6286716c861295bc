"""kill -9 after a tool call was recorded and before its result was: the session still resumes and continues.

Found by the kill campaign: the resumed history ended in an assistant
``tool_calls`` message with no ``tool`` reply, which OpenAI-compatible
endpoints refuse, so the session could never be continued.
"""

from __future__ import annotations

from pathlib import Path

from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec

from lsp_harness import server_env
from qwen_lsp.sessions.orphans import UNKNOWN_OUTCOME
from reliability.campaign import tool_calls_paired, wait_until
from reliability.lsp_process import ServerProcess


async def test_a_call_cut_off_by_a_kill_is_answered_on_resume(home: Path, tmp_path: Path, scripted: ScriptedOpenAI) -> None:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    target = workspace / "src" / "app.py"
    target.write_text("def f():\n    return 1\n")
    env = server_env(home, scripted.base_url)
    scripted.enqueue(Reply(chunks=["Editing."], tool_calls=[ToolCallSpec("write_file", {"file_path": str(target), "content": "x = 2\n"}, id="w1")]))

    server = await ServerProcess.start(env, workspace, {"tools": {"approvalMode": "yolo"}})
    server.hold.add("workspace/applyEdit")  # the edit is with the editor when the kill comes
    server.send_request("qwen/chat", {"prompt": "edit it"})
    assert await wait_until(lambda: "workspace/applyEdit" in server.asked, 30.0)
    session_id = next(p["sessionId"] for m, p in server.notifications if m == "qwen/chatEvent" and p.get("sessionId"))
    await server.kill()

    restarted = await ServerProcess.start(env, workspace)
    try:
        resumed = await restarted.request("qwen/sessions/resume", {"sessionId": session_id})
        assert [m["text"] for m in resumed["messages"]] == ["edit it", "Editing."]
        scripted.enqueue(Reply(chunks=["Checking the file first."]))
        result = await restarted.request("qwen/chat", {"prompt": "did it work?", "sessionId": session_id})
        assert result["text"] == "Checking the file first."
    finally:
        await restarted.close()
    body = [r for r in scripted.chat_requests() if r.body.get("stream")][-1].body
    assert tool_calls_paired(body)
    tool = next(m for m in body["messages"] if m["role"] == "tool")
    assert tool["tool_call_id"] == "w1" and UNKNOWN_OUTCOME in tool["content"]
