"""A session's recap (Qwen Code 0.24.4's ``sessionRecap.ts``), and the list title drawn from its dialog.

Qwen Code's recap asks a fast model to sum up the last stretch of a
conversation. What it shows the model is fixed, and model-free:
``filterToDialog`` keeps the words people exchanged (text parts of user and
model turns, no thoughts, no tool calls or results), and
``takeRecentDialog`` keeps the last 30 of those messages, starting at a
user message so the stretch opens with a request.

Listing sessions must not call a model (200 sessions would be 200 calls,
and listing must stay well under a second), so the list title is taken
from that same dialog without generation: the first user message of the
recap window, i.e. the request that opened the recent stretch of work.
For a short session that is its first prompt, as in Qwen Code's list; for
a long one it follows where the work went. A title the user or the CLI set
(``custom_title``) is preferred by the listing over this.

The recap itself (:func:`generate_recap`) is 0.24.4's ``generateSessionRecap``:
that dialog (``<system-reminder>`` blocks cut out of each text) and one more
user message go to the model under a system prompt asking for one or two
plain sentences, under 40 words, inside ``<recap>`` tags; 300 output tokens,
temperature 0.3, one attempt, and any failure means "no recap" (it is a
courtesy, never worth an error). The CLI shows it when the user comes back
to a session (``/recap``, or after being away); the editor asks for it when
a chat is resumed (``qwen/sessions/resume``).
"""

from __future__ import annotations

import re
import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, Protocol

from ..llm.client import StreamEvent, TextDelta
from ..llm.content import Content, to_openai_messages, visible_text

log = logging.getLogger(__name__)

RECENT_DIALOG_MESSAGES = 30
"""``takeRecentDialog(dialog, 30)`` in Qwen Code's recap."""
TITLE_MAX_CHARS = 80
_WHITESPACE = re.compile(r"\s+")


def filter_to_dialog(history: Iterable[Content]) -> list[Content]:
    """User and model turns cut to their non-blank text parts without ``thought``/``thoughtSignature``,
    ``<system-reminder>`` blocks cut out of each text.

    Function calls and responses carry no text, so tool turns drop out
    whole, as does any turn left with no parts.
    """
    dialog: list[Content] = []
    for content in history:
        if content.get("role") not in ("user", "model"):
            continue
        parts: list[Any] = []
        for part in content.get("parts", []):
            if _is_dialog_part(part):
                text = strip_system_reminders(part["text"])
                if text.strip():
                    parts.append({**part, "text": text})
        if parts:
            dialog.append({"role": content["role"], "parts": parts})
    return dialog


_REMINDER_OPEN = "<system-reminder>"
_REMINDER_CLOSE = "</system-reminder>"


def strip_system_reminders(text: str) -> str:
    """``text`` without its ``<system-reminder>…</system-reminder>`` blocks (an unclosed one runs to the end)."""
    out: list[str] = []
    offset = 0
    while True:
        start = text.find(_REMINDER_OPEN, offset)
        if start < 0:
            out.append(text[offset:])
            return "".join(out)
        out.append(text[offset:start])
        end = text.find(_REMINDER_CLOSE, start + len(_REMINDER_OPEN))
        if end < 0:
            return "".join(out)
        offset = end + len(_REMINDER_CLOSE)


def _is_dialog_part(part: Any) -> bool:
    return (
        isinstance(part, dict)
        and isinstance(part.get("text"), str)
        and bool(part["text"].strip())
        and not part.get("thought")
        and not part.get("thoughtSignature")
    )


def take_recent_dialog(dialog: Sequence[Content], limit: int = RECENT_DIALOG_MESSAGES) -> list[Content]:
    """The last ``limit`` messages, advanced to the first user message (possibly none left).

    A dialog no longer than ``limit`` is returned whole, whatever role opens it.
    """
    if len(dialog) <= limit:
        return list(dialog)
    start = len(dialog) - limit
    while start < len(dialog) and dialog[start]["role"] != "user":
        start += 1
    return list(dialog[start:])


def recap_dialog(history: Iterable[Content]) -> list[Content]:
    """What Qwen Code's recap would summarise: ``takeRecentDialog(filterToDialog(history), 30)``."""
    return take_recent_dialog(filter_to_dialog(history))


def recap_title(history: Iterable[Content]) -> str:
    """The first user message of the recap dialog, as a title; ``""`` if it has none."""
    return first_user_text(recap_dialog(history))


def first_user_text(history: Iterable[Content]) -> str:
    """The first user message with words the person wrote (reminders skipped), trimmed to a title."""
    for content in history:
        if content["role"] == "user":
            text = visible_text(content)
            if text.strip():
                return trim_title(text)
    return ""


def trim_title(text: str) -> str:
    """One line, whitespace collapsed, at most :data:`TITLE_MAX_CHARS` (``…`` when cut)."""
    flat = _WHITESPACE.sub(" ", text).strip()
    if len(flat) <= TITLE_MAX_CHARS:
        return flat
    return flat[: TITLE_MAX_CHARS - 1].rstrip() + "…"


# --------------------------------------------------------------------------- generation
RECAP_SYSTEM_PROMPT = """You write the recap a programming assistant shows when its user comes back to a conversation.

The user was away. In under 40 words — one or two plain sentences, no markdown — say what the overall goal and the current task are, then the single next step. Leave out root causes, implementation details, side tasks and asides.

Output format (strict):
- Put the recap inside <recap>...</recap> tags.
- Write NOTHING outside the tags: no preamble, no reasoning, no closing words.

Example:
<recap>Fixing the flaky login retry test. Next: make the integration test's timing deterministic.</recap>"""
RECAP_USER_PROMPT = "Write the recap now, inside <recap>...</recap>, with nothing outside the tags."
RECAP_MAX_TOKENS = 300
RECAP_TEMPERATURE = 0.3
RECAP_TIMEOUT_SECONDS = 20.0
"""A resume waits for its recap at most this long; past it the chat opens without one."""
MAX_RECAP_ANSWER_CHARS = 4_000
"""300 tokens is ~1,200 characters; a longer stream is not a recap and is cut off."""
_OPEN_TAG = "<recap>"
_TAGGED = re.compile(r"<recap>([\s\S]*?)</recap>", re.IGNORECASE)


class RecapModel(Protocol):
    def stream(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        max_retries: int | None = None,
    ) -> AsyncIterator[StreamEvent]: ...


def extract_recap(raw: str) -> str:
    """The text inside ``<recap>…</recap>``; an unclosed tag runs to the end; no tag at all: ``""``."""
    tagged = _TAGGED.search(raw)
    if tagged and tagged.group(1):
        return tagged.group(1).strip()
    at = raw.lower().find(_OPEN_TAG)
    return raw[at + len(_OPEN_TAG) :].strip() if at >= 0 else ""


async def generate_recap(history: Sequence[Content], model: RecapModel, *, timeout: float = RECAP_TIMEOUT_SECONDS) -> str | None:
    """The recap of ``history``, or None (too short, nothing to say, or the model failed)."""
    if len(history) < 2:
        return None
    dialog = recap_dialog(history)
    if not dialog:
        return None
    messages = to_openai_messages(RECAP_SYSTEM_PROMPT, [*dialog, {"role": "user", "parts": [{"text": RECAP_USER_PROMPT}]}])
    try:
        async with asyncio.timeout(timeout):
            raw = await _collect(model, messages)
    except Exception as exc:  # timeout, HTTP or model error: a recap is a courtesy, never an error
        log.info("no session recap: %s", type(exc).__name__ + (f": {exc}" if str(exc) else ""))
        return None
    return extract_recap(raw) or None


async def _collect(model: RecapModel, messages: Sequence[Mapping[str, object]]) -> str:
    parts: list[str] = []
    size = 0
    stream = model.stream(messages, tools=None, max_tokens=RECAP_MAX_TOKENS, temperature=RECAP_TEMPERATURE, max_retries=0)  # one attempt
    async with contextlib.aclosing(stream) as events:  # type: ignore[type-var]
        async for event in events:
            if isinstance(event, TextDelta):
                parts.append(event.text)
                size += len(event.text)
                if size > MAX_RECAP_ANSWER_CHARS:
                    break
    return "".join(parts)[:MAX_RECAP_ANSWER_CHARS]
