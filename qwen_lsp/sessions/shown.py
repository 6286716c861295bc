"""What a reopened chat shows the user: prompts, answers with their tool calls in place, and the turns that ended badly.

A live turn is one answer however many model rounds it takes: the text of
every round streams into it and each tool call's row sits where the call came
(after the text streamed before it). A resumed chat must look the same, so the
recorded Contents of one turn — the model's rounds and the tool results
between them — fold back into one answer with the calls at their offsets.

Offsets count UTF-16 code units, as the editor's JavaScript measures the
streamed text (an emoji is two), so a row lands in the same place live and
reopened.

Three endings are kept: an answer marked ``interrupted`` (Stop, or the
pieces a crash left, see ``sessions.recording``); a turn whose model request
failed, which shows the error recorded for it (``sessions.failures``), its
text and kind as the editor showed them live, after whatever part of the
answer had arrived; and a prompt with nothing after it (stopped before any
text arrived, or a file written before errors were recorded), whose answer
says that none was recorded. A recorded error followed by an answer in the
same turn is not shown: the Qwen Code CLI records every failed attempt, and
a later attempt answered.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..llm.content import Content, function_response_text, visible_text
from .failures import RecordedFailure, recorded_failure

NO_ANSWER = "No answer was recorded for this message: the request failed or was stopped before any text arrived."


@dataclass
class ShownTool:
    id: str
    name: str
    at: int
    args: dict[str, Any] | None
    result: str | None = None
    display: str | None = None
    is_error: bool = False


@dataclass
class ShownMessage:
    role: Literal["user", "assistant"]
    text: str = ""
    tools: list[ShownTool] = field(default_factory=list)
    interrupted: bool = False
    error: str | None = None
    error_kind: str | None = None
    """The recorded error's kind (``llm.errors.ErrorKind``) when the session file names one."""


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def shown_transcript(conversation: Iterable[tuple[Content | None, dict[str, Any]]]) -> list[ShownMessage]:
    """The chat as the user saw it, from its Contents and their records (``interrupted``, ``toolCallResult``).

    A pair without a Content is a failed request's record
    (``reader.build_conversation``). Tool results are matched to the oldest
    unanswered call with their id, as the editor matches them live: several
    OpenAI-compatible servers number calls ``call_0`` in every round, so an
    id alone is not unique in a turn.
    """
    out: list[ShownMessage] = []
    answer: ShownMessage | None = None
    waiting: list[ShownTool] = []
    failure: RecordedFailure | None = None
    """The last error recorded in the turn so far; a model record after it means a retry answered."""

    def end_turn() -> None:
        nonlocal answer
        if failure is not None and out and out[-1].role == "user":
            answer = ShownMessage("assistant")
            out.append(answer)
        if failure is not None and answer is not None:
            answer.error, answer.error_kind = failure.message, failure.kind
        elif out and out[-1].role == "user":
            out.append(ShownMessage("assistant", error=NO_ANSWER))

    for content, record in conversation:
        if content is None:
            failure = recorded_failure(record) or failure
            continue
        parts = [p for p in content.get("parts", []) if isinstance(p, dict)]
        if content.get("role") == "model":
            failure = None
            if answer is None:
                answer = ShownMessage("assistant")
                out.append(answer)
            answer.text += visible_text(content)  # a round's text streams before its calls
            at = _utf16_len(answer.text)
            for part in parts:
                call = part.get("functionCall")
                if isinstance(call, dict):
                    args = call.get("args")
                    tool = ShownTool(str(call.get("id") or ""), str(call.get("name") or ""), at, args if isinstance(args, dict) else None)
                    answer.tools.append(tool)
                    waiting.append(tool)
            answer.interrupted = answer.interrupted or bool(record.get("interrupted"))
            continue
        # One tool_result record per call (sessions.registry), its summary line in resultDisplay.
        summary = record.get("toolCallResult")
        display = summary.get("resultDisplay") if isinstance(summary, dict) else None
        for part in parts:
            response = part.get("functionResponse")
            if not isinstance(response, dict):
                continue
            answered = next((t for t in waiting if t.id == str(response.get("id") or "")), None)
            if answered is not None:
                waiting.remove(answered)
                body = response.get("response")
                answered.result = function_response_text(response)
                answered.display = display if isinstance(display, str) and len(parts) == 1 else None
                answered.is_error = isinstance(body, dict) and "error" in body and "output" not in body
        text = visible_text(content)
        if text.strip():
            end_turn()
            out.append(ShownMessage("user", text))
            answer = None
            waiting = []
            failure = None
    end_turn()
    return out
