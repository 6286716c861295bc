"""The scripted OpenAI server for the commands end-to-end test (e2e/commands.test.ts).

Arguments: the request log (every request body appended as a JSON line) and the workspace.
/init's analysis request gets a write_file of QWEN.md; /remember's request a save_memory call;
the compression request a summary; a message ending in "slowly A" / "slowly B" a long answer
streamed slowly (two chats at once); after a tool result, "Done."; anything else a short answer
naming what the message ended with."""

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from tests.support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec  # noqa: E402

LOG, WORKSPACE = sys.argv[1], Path(sys.argv[2])
SUMMARY = "<analysis>Greeted.</analysis>\n\n<state_snapshot>\n<overall_goal>Say hello (summarized by the e2e model).</overall_goal>\n</state_snapshot>"


def text_of(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def reply(body: dict) -> Reply:
    messages = body.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        return Reply(chunks=["Done."])
    text = text_of([m for m in messages if m.get("role") == "user"][-1])
    if "<state_snapshot>" in text:
        return Reply(chunks=[SUMMARY])
    if "write a QWEN.md file" in text:
        content = "# Project notes\n\nWritten by /init.\n"
        return Reply(chunks=["Writing QWEN.md."], tool_calls=[ToolCallSpec("write_file", {"file_path": str(WORKSPACE / "QWEN.md"), "content": content}, id="w0")])
    if "Please save the following to your memory system" in text:
        fact = text.rstrip().rsplit("\n", 1)[-1]
        return Reply(chunks=["Saving."], tool_calls=[ToolCallSpec("save_memory", {"fact": fact}, id="m0")])
    for name in ("A", "B"):
        if text.rstrip().endswith(f"slowly {name}"):
            return Reply(chunks=[f"{name}{i} " for i in range(40)], delay=0.15)
    return Reply(chunks=["You said: ", text.rstrip().rsplit("\n", 1)[-1][-60:]])


server = ScriptedOpenAI(0, default=reply, log_path=LOG)
server.start()
print(server.base_url, flush=True)
threading.Event().wait()
