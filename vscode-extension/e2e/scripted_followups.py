"""The scripted OpenAI server for the follow-up end-to-end test (e2e/followups.test.ts).

One model plays every part, told apart by what a request asks, as a real model would:
- the suggestion side query ("What will the user type next?") answers the follow-up scripted for
  the last prompt in its excerpt, or none;
- a chat turn or speculation whose last user message is a scripted follow-up calls ``edit`` on
  src/api/users.py (the speculation writes it to its overlay; accepting applies it);
- the "read it over and over" prompt calls ``read_file`` 21 times in one round, past skill
  review's threshold of 20;
- the skill review's task (it names the proposal's SKILL.md) writes the SKILL.md below there;
- after tool results: a one-line summary; anything else: a short answer.

Usage: scripted_followups.py WORKSPACE. Prints the base URL, then serves until killed.
"""

import json
import re
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from tests.support.scripted_openai import Reply, ScriptedOpenAI, ToolCallSpec  # noqa: E402

USERS = str(Path(sys.argv[1]).resolve() / "src" / "api" / "users.py")
ASKS = {
    # prompt -> (answer, the follow-up suggested after it)
    "What does list_users return?": ("It returns an empty list.", "Make list_users return ada"),
    "Who is in the list now?": ("Just ada.", "Rename list_users to all_users"),
}
EDITS = {
    # follow-up -> the edit it makes in users.py
    "Make list_users return ada": ("return []", "return ['ada']"),
    "Rename list_users to all_users": ("def list_users", "def all_users"),
}
BUSY = "Read users.py over and over"
BUSY_READS = 21
SKILL = (
    "---\nname: reread-module\ndescription: Re-read a module until its contents are settled\nsource: auto-skill\n---\n\n"
    "1. Read the module.\n2. Read it again after each change.\n"
)
REVIEW_TARGET = re.compile(r"write_file: (/\S+/SKILL\.md)")
SUGGESTION_QUESTION = "What will the user type next?"


def text_of(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def suggestion_for(excerpt: str) -> str:
    """The follow-up for the excerpt's last user line (the side query sees the dialogue as ``User:`` lines)."""
    last_user = excerpt.rsplit("User: ", 1)[-1]
    return next((follow for ask, (_answer, follow) in ASKS.items() if ask in last_user), "")


def reply(body: dict) -> Reply:
    messages = body.get("messages", [])
    users = [text_of(m) for m in messages if m.get("role") == "user"]
    last = users[-1] if users else ""
    if SUGGESTION_QUESTION in last:
        return Reply(chunks=[json.dumps({"suggestion": suggestion_for(last)})])
    review = REVIEW_TARGET.search(last)
    if messages and messages[-1].get("role") == "tool":
        if review:
            return Reply(chunks=["Saved a proposed skill."])
        return Reply(chunks=["Done: " + next((f for f in EDITS if f in last), "read it all") + "."])
    if review:
        return Reply(chunks=[], tool_calls=[ToolCallSpec("write_file", {"file_path": review.group(1), "content": SKILL})])
    follow = next((f for f in EDITS if f in last), None)
    if follow:
        old, new = EDITS[follow]
        return Reply(chunks=["Editing users.py."], tool_calls=[ToolCallSpec("edit", {"file_path": USERS, "old_string": old, "new_string": new})])
    if BUSY in last:
        return Reply(chunks=[], tool_calls=[ToolCallSpec("read_file", {"file_path": USERS}) for _ in range(BUSY_READS)])
    return Reply(chunks=[next((answer for ask, (answer, _f) in ASKS.items() if ask in last), "Noted.")])


server = ScriptedOpenAI(0, default=reply)
server.start()
print(server.base_url, flush=True)
threading.Event().wait()
