"""The follow-up suggestion's side query: what is asked, and which answers are kept.

Qwen Code's suggestion prompt asks the model to predict what the *user*
would type next — not what the assistant thinks they should do — in 2 to
12 words, specific ("run the tests" over "continue"), and to stay silent
when the next step is not evident. It never suggests praise, questions,
the assistant's own voice, new ideas the user did not ask about, or more
than one sentence. The instructions below say the same in our words, and
:func:`parse_suggestion` drops answers that break those rules anyway
(Qwen Code filters them too), so a chatty model shows nothing rather than
noise.

The request is a side query (no tools, no history): the conversation goes
in as a bounded excerpt of its recent visible text — tool payloads and
thoughts left out, they would drown the question and leak reasoning.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...llm.content import Content

MAX_WORDS = 12
MAX_CHARS = 100
"""A suggestion is one short line: longer answers are dropped, not cut."""
RECENT_MESSAGES = 8
MAX_MESSAGE_CHARS = 2_000
"""The excerpt keeps the last few messages' visible text, each cut here."""
TIMEOUT_SECONDS = 30.0

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"suggestion": {"type": "string"}},
    "required": ["suggestion"],
}

SYSTEM = """You predict the next message a user will type to their coding assistant.

Read the conversation excerpt. Answer with what THE USER would most naturally type next — not what you think they should do. Test: would they think "I was just about to type that"?

Examples:
- The user asked to fix a bug and run the tests; the bug is fixed -> "run the tests"
- Code was just written -> "try it out"
- The assistant offered options -> the option the user most likely picks, judging by the conversation
- The assistant asked whether to continue -> "yes, continue"
- The task is done and the next step is obvious -> "commit this"
- After an error or a misunderstanding -> nothing (let the user judge)

Be specific: "run the tests" is better than "continue".

Never suggest: praise or thanks ("looks good", "thanks"), questions, anything in the assistant's voice ("I'll...", "Let me...", "Here is..."), new ideas the user has not raised, or more than one sentence.

If the next step is not evident from what the user said, suggest nothing.

Format: 2 to 12 words, in the user's language and style. Reply with a JSON object {"suggestion": "<text>"}; use an empty string for no suggestion."""

_ASSISTANT_VOICE = ("i'll ", "i will ", "let me ", "here is ", "here's ", "i can ", "i've ", "i have ")
_EVALUATIVE = frozenset({"thanks", "thank you", "thx", "looks good", "great", "nice", "perfect", "awesome", "cool", "lgtm", "good job"})
_SILENCE = frozenset({"none", "nothing", "no suggestion", "n/a", "(none)", "silence", "[none]"})


def excerpt(history: Sequence[Content]) -> str:
    """The recent visible dialogue, oldest first, as ``User:`` / ``Assistant:`` lines."""
    lines: list[str] = []
    for content in history:
        texts = [p["text"] for p in content.get("parts", []) if isinstance(p.get("text"), str) and not p.get("thought")]
        # A user message's reminders are system text, not what the user typed.
        texts = [t for t in texts if not t.lstrip().startswith("<system-reminder>")]
        text = "\n".join(t.strip() for t in texts if t.strip())
        if not text:
            continue
        who = "Assistant" if content.get("role") == "model" else "User"
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[:MAX_MESSAGE_CHARS] + " [...]"
        lines.append(f"{who}: {text}")
    return "\n\n".join(lines[-RECENT_MESSAGES:])


def user_message(history: Sequence[Content]) -> str:
    return f"<conversation>\n{excerpt(history)}\n</conversation>\n\nWhat will the user type next?"


def parse_suggestion(answer: str) -> str | None:
    """The suggestion in the side query's (schema-checked) JSON answer, or None when there is none worth showing."""
    try:
        value = json.loads(answer)
    except ValueError:
        return None
    raw = value.get("suggestion") if isinstance(value, dict) else None
    if not isinstance(raw, str):
        return None
    text = raw.strip().strip("\"'`“”‘’").strip()
    if not text or "\n" in text or len(text) > MAX_CHARS:
        return None
    lowered = text.lower().rstrip(".!")
    if lowered in _SILENCE or lowered in _EVALUATIVE:
        return None
    if text.endswith("?") or lowered.startswith(_ASSISTANT_VOICE):
        return None
    if len(text.split()) > MAX_WORDS:
        return None
    body = text.rstrip(".!")
    if any(mark in body for mark in (". ", "! ", "? ", "。", "！", "？")):  # more than one sentence
        return None
    return text
