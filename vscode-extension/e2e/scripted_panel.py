"""The scripted OpenAI server for the Context picture end-to-end test (e2e/panelContext.test.ts).

- "Write a users handler": the first request calls the ``skill`` tool for api-conventions; after
  the tool result, a short answer (so the skill's instructions first reach the turn's second request);
- anything else: a short answer.

Every chat request (one that carries the tools) is logged to LOG as one JSON line: its size counted
from the body alone as the server says it counts a request (tests/support/request_tokens.py), and
whether it holds the skill's instructions, the editor's context, or the conditional skill users-api
in a skills listing. The test compares the panel's
bars and chips with these lines.

Usage: scripted_panel.py LOG. Prints the base URL, then serves until killed.
"""

import json
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from qwen_lsp.llm.tokens import TokenCounter  # noqa: E402
from support.request_tokens import body_tokens, is_main_request, texts  # noqa: E402
from support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec  # noqa: E402

LOG = Path(sys.argv[1])
SKILL_ASK = "Write a users handler"
SKILL_BODY = "Every handler returns a typed UsersResponse"
EDITOR = "Here is the user's current editor context"
LISTED = "The users endpoints"
count = TokenCounter().count


def reply(body: dict) -> Reply:
    messages = body.get("messages", [])
    if is_main_request(body):
        sent = [t for m in messages[1:] for t in texts(m)]
        line = {
            "tokens": body_tokens(body, count),
            "skill": any(SKILL_BODY in t for t in sent),
            "editor": any(EDITOR in t for t in sent),
            "listed": any(LISTED in t for t in sent),
        }
        with LOG.open("a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")
    if messages and messages[-1].get("role") == "tool":
        return Reply(chunks=["Handler written the api-conventions way."])
    last = texts(messages[-1]) if messages else []
    if any(SKILL_ASK in t for t in last):
        return Reply(chunks=[], tool_calls=[ToolCallSpec("skill", {"skill": "api-conventions"})])
    return Reply(chunks=["Looks right."])


server = ScriptedOpenAI(0, default=reply)
server.start()
print(server.base_url, flush=True)
threading.Event().wait()
