"""The scripted OpenAI server for the end-to-end test: a Markdown answer with a code block,
streamed a few words at a time; a prompt containing "slow" gets a long answer streamed slowly
so Stop can interrupt it; "find list_users with tools" takes two tool rounds that both call
their tool call_0; "what do I have selected?" is answered with the selection the
editor-context reminder carried (or that none came); "a wide table and a long code block" gets
a six-column table, a long word and URL, and an 85-line Python block; "this one fails" gets an
HTTP 400; the compression request ("Compact") gets a drafted <analysis> and a
<state_snapshot>, the shape Qwen Code's prompt asks for; "…it fails once" gets an HTTP 401 the
first time and the answer after (a Retry); given the workspace as its argument, "write the nested
file" calls write_file on a long path and "run the long command" run_shell_command with a long
command (both ask first). Prints the base URL, then serves until killed."""

import re
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from tests.support.scripted_openai import HttpError, Reply, ScriptedOpenAI, ToolCallSpec  # noqa: E402

ANSWER = (
    "Here is a **greeting** function:\n\n"
    "```python\ndef hello(name):\n    return f\"Hello, {name}!\"\n```\n\n"
    "Call it with `hello(\"Qwen\")`."
)
WIDE = (
    "| Endpoint | Method | Handler | Auth | Rate limit | Notes |\n|---|---|---|---|---|---|\n"
    "| /api/users | GET | list_users | token | 100/min | paginated by cursor |\n"
    "| /api/users/{id} | DELETE | delete_user | admin | 10/min | soft delete only |\n\n"
    + "Supercalifragilisticexpialidocious" * 4
    + "\n\nSee https://example.com/a/very/long/path/that/does/not/break/anywhere/by/itself/index.html?query=1234567890\n\n"
    "```python\nimport os\n\ndef handler(event):\n    return \"hi\" + str(42)\n"
    + "".join(f"x{i} = {i}  # line {i}\n" for i in range(80))
    + "```\n\nDone."
)
SLOW = " ".join(f"step{i}" for i in range(600))
SUMMARY = (
    "<analysis>The user asked for a greeting function, then for a slow explanation they stopped.</analysis>\n\n"
    "<state_snapshot>\n<overall_goal>Write a greeting function (summarized by the e2e model).</overall_goal>\n"
    "<key_knowledge>hello(name) returns an f-string greeting.</key_knowledge>\n</state_snapshot>"
)


def words(text: str) -> list[str]:
    parts = text.split(" ")
    return [p + " " for p in parts[:-1]] + [parts[-1]]


EDITOR_INTROS = ("Here is the user's current editor context.", "Here is a summary of changes in the user's current editor context.")


def editor_answer(parts: list[str]) -> str:
    """What the editor-context reminder of this message said was selected, so the panel shows what the model got."""
    told = [p for p in parts if any(intro in p for intro in EDITOR_INTROS)]
    if not told:
        return "No editor context came with this message."
    selected = told[0].split("Selected text:\n```\n", 1)
    if len(selected) < 2:
        return "Editor context came without a selection."
    return "The editor selection I got:\n\n```\n" + selected[1].split("\n```", 1)[0] + "\n```"


TOOL_ROUNDS = [
    Reply(chunks=["first."], tool_calls=[ToolCallSpec("glob", {"pattern": "src/**/*.py"}, id="call_0")]),
    Reply(chunks=["list_users() ", "is defined there."], tool_calls=[ToolCallSpec("glob", {"pattern": "*.md"}, id="call_0")]),
    Reply(chunks=["It is called once."]),
]


def user_text(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content or [])


def tool_round(messages: list) -> Reply | None:
    """The next round of the tool turn when it is still running (no final answer after its prompt yet)."""
    asked = [i for i, m in enumerate(messages) if m.get("role") == "user" and user_text(m).rstrip().endswith("find list_users with tools")]
    if not asked:
        return None
    after = messages[asked[-1] :]
    if any(m.get("role") == "assistant" and not m.get("tool_calls") for m in after):
        return None
    return TOOL_ROUNDS[min(sum(m.get("role") == "tool" for m in after), 2)]


WS = sys.argv[1] if len(sys.argv) > 1 else ""
NESTED = "src/services/customer_accounts/billing_reconciliation/adapters/quarterly_statement_generator.py"
LONG_COMMAND = "touch build/reports/customer_accounts/billing_reconciliation/quarterly_statement_generator_output.txt && echo generated"
ASKING_CALLS = {
    "write the nested file": ToolCallSpec("write_file", {"file_path": f"{WS}/{NESTED}", "content": "x = 1\n"}, id="call_nested"),
    "run the long command": ToolCallSpec("run_shell_command", {"command": LONG_COMMAND, "description": "generate"}, id="call_long"),
}

FAILED_ONCE: set[str] = set()
"""Prompts ending "it fails once" that were refused already: the next request with one is answered (a Retry)."""


def fails_once(messages: list, prompt: str) -> Reply | HttpError:
    """401 the first time (Retry is offered), then the usual answer; if the prompt reached the model twice, says so."""
    if prompt not in FAILED_ONCE:
        FAILED_ONCE.add(prompt)
        return HttpError(401, "The e2e model wants a fresh try")
    times = sum(user_text(m).rstrip().endswith(prompt) for m in messages if m.get("role") == "user")
    return Reply(chunks=words(ANSWER if times == 1 else f"The prompt reached the model {times} times."), delay=0.01)


def reply(body: dict) -> Reply | HttpError:
    messages = body.get("messages", [])
    if (round_reply := tool_round(messages)) is not None:
        return round_reply
    last = [m for m in messages if m.get("role") == "user"][-1]
    content = last.get("content")
    parts = [content] if isinstance(content, str) else [p.get("text", "") for p in content or []]
    text = " ".join(parts)
    if text.rstrip().endswith("what do I have selected?"):
        return Reply(chunks=words(editor_answer(parts)), delay=0.01)
    asking = next((call for prompt, call in ASKING_CALLS.items() if prompt in text), None)  # reminders may come after it
    if asking is not None and WS:
        return Reply(chunks=["On it."], tool_calls=[asking])
    typed = re.split(r"</system-reminder>|\n", text.rstrip())[-1].strip()  # the prompt, after any reminder
    if typed.endswith("it fails once"):
        return fails_once(messages, typed)
    if text.rstrip().endswith("nothing outside the tags.") and any("fails once" in user_text(m) for m in messages):
        return Reply(chunks=["<recap>Asking questions that fail once.</recap>"])  # a History resume's recap (sessions/recap.py)
    if text.rstrip().endswith("this one fails"):
        return HttpError(400, "The e2e model refuses this prompt")
    if text.rstrip().endswith("a wide table and a long code block"):
        return Reply(chunks=[WIDE[i : i + 200] for i in range(0, len(WIDE), 200)], delay=0.01)
    if "<state_snapshot>" in text:  # compaction's SNAPSHOT_REQUEST (qwen_lsp/compaction/summary.py)
        return Reply(chunks=words(SUMMARY), delay=0.01)
    if "slow" in text.split("\n")[-1] or text.rstrip().endswith("slow please"):
        return Reply(chunks=words(SLOW), delay=0.1)
    return Reply(chunks=words(ANSWER), delay=0.03)


server = ScriptedOpenAI(0, default=reply)
server.start()
print(server.base_url, flush=True)
threading.Event().wait()
