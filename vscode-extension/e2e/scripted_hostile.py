"""The scripted OpenAI server for e2e/hostile.test.ts: a model that tries what a hostile one would.

"commit the release" calls run_shell_command with a long command carrying a Hangul filler
(U+3164); "write the big file" calls write_file with a 6,000-line file whose last line is
"LAST LINE 6000" (over the 200,000 characters the server once cut its diff at); "show the links" calls read_file
on paths out of the workspace (.. segments, percent-encoded dots, a symlink) and one in (the tool
rows link the paths the model gave), then answers with a code block carrying a right-to-left
override. After any other tool result the turn ends with "Done.".
Usage: scripted_hostile.py WORKSPACE. Prints the base URL, then serves until killed."""

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from tests.support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec  # noqa: E402

WS = sys.argv[1]
COMMAND = 'git commit -m "\u3164release" && npm run build -- --output-path=dist/very/long/output/path/for/the/bundle'
BIG = "".join(f"line {i:05d} of the generated table, padded to be long enough\n" for i in range(1, 6000)) + "LAST LINE 6000\n"
LINK_PATHS = [f"{WS}/../../../../../../etc/passwd", f"{WS}/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd", f"{WS}/link-out/secret.txt", f"{WS}/src/notes.py"]
RUN = "Run:\n\n```bash\nrm -rf ./build\u202etxt.exe # \u3164\n```\n"


def user_text(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content or [])


def reply(body: dict) -> Reply:
    messages = body.get("messages", [])
    text = user_text([m for m in messages if m.get("role") == "user"][-1]).rstrip()
    if messages and messages[-1].get("role") == "tool":
        return Reply(chunks=[RUN if text.endswith("show the links") else "Done."])
    if text.endswith("commit the release"):
        return Reply(chunks=["Committing."], tool_calls=[ToolCallSpec("run_shell_command", {"command": COMMAND}, id="call_sh")])
    if text.endswith("write the big file"):
        return Reply(chunks=["Writing."], tool_calls=[ToolCallSpec("write_file", {"file_path": f"{WS}/big.txt", "content": BIG}, id="call_big")])
    if text.endswith("show the links"):
        calls = [ToolCallSpec("read_file", {"file_path": p}, id=f"call_r{i}") for i, p in enumerate(LINK_PATHS)]
        return Reply(chunks=["Reading."], tool_calls=calls)
    return Reply(chunks=["Hello."])


server = ScriptedOpenAI(0, default=reply)
server.start()
print(server.base_url, flush=True)
threading.Event().wait()
