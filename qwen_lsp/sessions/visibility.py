"""Which recorded sessions the session list shows.

A turn records the user's prompt before the model is asked, so a prompt is
never lost, and a chat that failed can be retried with its session id. But
a refused connection, a 401, a 429 or a 5xx then leaves a session holding
only that prompt, and a dozen failed tries would fill the list with a dozen
sessions titled "hi". So a session whose every turn failed before any
answer stays on disk (resumable by id, deletable) and is left out of the
list.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def was_answered(records: Iterable[dict[str, Any]]) -> bool:
    """True when any turn got an answer, or the session was kept on purpose.

    An answer is an ``assistant`` record with at least one part (a cancelled
    partial answer counts: the user saw it). A compression checkpoint implies
    earlier answers; a title the user set means they want the session listed.
    """
    for record in records:
        kind, subtype = record.get("type"), record.get("subtype")
        if kind == "assistant" and _has_parts(record.get("message")):
            return True
        if kind == "system" and subtype in ("chat_compression", "custom_title"):
            return True
    return False


def _has_parts(message: Any) -> bool:
    return isinstance(message, dict) and isinstance(message.get("parts"), list) and bool(message["parts"])
