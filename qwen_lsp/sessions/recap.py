"""The recap dialog of a session (Qwen Code's ``sessionRecap.ts``), and the list title drawn from it.

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
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from qwen_lsp.llm.content import Content, visible_text

RECENT_DIALOG_MESSAGES = 30
"""``takeRecentDialog(dialog, 30)`` in Qwen Code's recap."""
TITLE_MAX_CHARS = 80
_WHITESPACE = re.compile(r"\s+")


def filter_to_dialog(history: Iterable[Content]) -> list[Content]:
    """User and model turns cut to their non-blank text parts without ``thought``/``thoughtSignature``.

    Function calls and responses carry no text, so tool turns drop out
    whole, as does any turn left with no parts.
    """
    dialog: list[Content] = []
    for content in history:
        if content.get("role") not in ("user", "model"):
            continue
        parts = [p for p in content.get("parts", []) if _is_dialog_part(p)]
        if parts:
            dialog.append({"role": content["role"], "parts": parts})
    return dialog


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
