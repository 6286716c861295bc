"""Each request a chat sent, part by part (the Context picture), and what its context gained turn by turn (the chips).

The picture of a request is taken right before the loop sends it, from the
same system prompt, messages and tools array the loop turns into the HTTP
body, and counted the way :class:`~qwen_lsp.agent.accounting.RequestAccounting`
counts a request: the system prompt by section kind, each message part that
was tagged when it was added (a skills listing, recalled memory, the editor's
context; a skill's instructions by the call that loaded them), the rest of the
messages as ``history`` (their count minus the tagged parts), and the tools
array. So the parts add up exactly to the server's count of that request.

The chips of a turn compare its last request (the one that got the answer,
holding every tool round of the turn) with the previous turn's last request:
the skills whose instructions are new, then whatever each feature says it
added (:meth:`~qwen_lsp.agent.hooks.Feature.context_changes`), so the engine
names no feature.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..context.sections import Section
from ..llm.content import Content, function_response_text, is_thought
from ..protocol import ContextChange, RequestPart, SentRequest
from ..sessions.registry import ChatSession, Slot
from .hooks import Feature, Turn, TurnPrefetch
from .tools.skill import SKILL_TOOL_NAME

ROWS = ("system", "context files", "memory", "skills", "editor context", "history", "tools")
"""The picture's rows, in the order they stack."""
KEEP = 20
"""Requests kept per chat for the picture."""
_SECTION_ROWS = {"context file": "context files", "rule": "context files", "memory": "memory"}


@dataclass
class ChatPictures:
    """One chat's pictures: its last requests, the rows of its tagged message parts, the skills its previous
    turn's request held."""

    sent: deque[_Taken] = field(default_factory=lambda: deque(maxlen=KEEP))
    rows: dict[str, str] = field(default_factory=dict)
    """A tagged message part's text → its row (texts that left the history are dropped at the next picture)."""
    skills_before: frozenset[str] = frozenset()
    """Skills whose instructions the last request held, at the end of the previous answered turn."""
    listed_before: frozenset[str] = frozenset()
    """The skills the chat's listing named at the end of the previous answered turn."""


SLOT: Slot[ChatPictures] = Slot("context.pictures", ChatPictures)


def tag(session: ChatSession, row: str, texts: Sequence[str]) -> None:
    """These message-part texts count under ``row`` in the chat's pictures (one of :data:`ROWS`)."""
    rows = session.slot(SLOT).rows
    for text in texts:
        rows[text] = row


class _Tagged:
    """A feature's recall whose texts count under one row."""

    def __init__(self, inner: TurnPrefetch, session: ChatSession, row: str) -> None:
        self._inner, self._session, self._row = inner, session, row

    async def initial(self) -> list[str]:
        texts = await self._inner.initial()
        tag(self._session, self._row, texts)
        return texts

    def take(self) -> list[str]:
        texts = self._inner.take()
        tag(self._session, self._row, texts)
        return texts

    def cancel(self) -> None:
        self._inner.cancel()


def tagged(prefetch: TurnPrefetch | None, session: ChatSession, row: str) -> TurnPrefetch | None:
    """``prefetch`` with every text it hands over counted under ``row``."""
    return None if prefetch is None else _Tagged(prefetch, session, row)


def request_parts(
    count: Callable[[str], int],
    *,
    system: str,
    sections: Sequence[Section],
    history: Sequence[Content],
    history_tokens: int,
    declarations: Sequence[Mapping[str, Any]],
    rows: Mapping[str, str],
) -> list[RequestPart]:
    """The request's parts, every row of :data:`ROWS` in order.

    ``history_tokens`` is the messages' count as accounting makes it; tagged parts are counted as that count
    counts them, so what remains for ``history`` keeps the sum exact.
    """
    tokens = dict.fromkeys(ROWS, 0)
    joined = 0
    for s in sections:
        n = count(s.text)
        joined += n
        tokens[_SECTION_ROWS.get(s.name, "system")] += n
    tokens["system"] += max(0, count(system) - joined)
    carved = 0
    loading = _skill_calls(history)
    for content in history:
        for part in content.get("parts") or []:
            row, text = _tagged_part(part, rows, loading)
            if row is not None:
                n = count(text)
                tokens[row] += n
                carved += n
    tokens["history"] = history_tokens - carved
    tokens["tools"] = count(json.dumps(list(declarations), separators=(",", ":"), ensure_ascii=False))
    return [RequestPart(name=name, tokens=n) for name, n in tokens.items()]


def _skill_calls(history: Sequence[Content]) -> dict[str, str]:
    """The ``skill`` calls of the history: call id → the skill it loads."""
    out: dict[str, str] = {}
    for content in history:
        for part in content.get("parts") or []:
            call: Any = part.get("functionCall")
            if call is not None and call.get("name") == SKILL_TOOL_NAME and isinstance((call.get("args") or {}).get("skill"), str):
                out[call.get("id", "")] = call["args"]["skill"]
    return out


def loaded_skills(history: Sequence[Content]) -> frozenset[str]:
    """The skills whose instructions the history holds (a ``skill`` call's successful response)."""
    loading = _skill_calls(history)
    responses: list[Any] = [p.get("functionResponse") for c in history for p in c.get("parts") or []]
    return frozenset(loading[r.get("id", "")] for r in responses if _is_instructions(r, loading))


def _is_instructions(response: Any, loading: Mapping[str, str]) -> bool:
    return response is not None and response.get("id", "") in loading and "output" in (response.get("response") or {})


def _tagged_part(part: Mapping[str, Any], rows: Mapping[str, str], loading: Mapping[str, str]) -> tuple[str | None, str]:
    """A part's row and the text it is counted by (as ``content_tokens`` counts it); ``None`` for plain history."""
    if "text" in part and not is_thought(part):  # type: ignore[arg-type]
        return rows.get(part["text"]), part["text"]
    response = part.get("functionResponse")
    if _is_instructions(response, loading):
        return "skills", function_response_text(response)  # type: ignore[arg-type]
    return None, ""


@dataclass
class _Taken:
    """A request as it was sent, kept to be counted when a picture is asked for: counting needs the vocabulary,
    and a chat's first request must not wait for it to load."""

    turn_id: str
    round: int
    system: str
    sections: list[Section]
    history: list[Content]
    """A copy of the list; the Contents themselves are never changed in place."""
    declarations: Sequence[Mapping[str, Any]]
    rows: dict[str, str]
    reported: int | None = None
    counted: list[RequestPart] | None = None


class SkillFiles(Protocol):
    """What the chips need of the skills (``SkillManager``)."""

    def skill_path(self, name: str) -> str | None: ...

    def opened_by(self, name: str) -> str | None: ...


PartsOf = Callable[[str, Sequence[Section], Sequence[Content], Sequence[Mapping[str, Any]], Mapping[str, str]], list[RequestPart]]
"""Counts a request's parts: system prompt, its sections, messages, tools array, tagged rows."""


class RequestPictures:
    """Takes the picture of every request a chat sends, and words what a turn added."""

    def __init__(self, parts: PartsOf, skills: SkillFiles) -> None:
        self._parts = parts
        self._skills = skills

    def sending(self, session: ChatSession, turn_id: str, declarations: Sequence[Mapping[str, Any]]) -> None:
        """The loop is about to send the chat's history with its system prompt and these tools."""
        pictures = session.slot(SLOT)
        _drop_gone(pictures, session.history)
        context = session.context
        round_ = sum(1 for s in pictures.sent if s.turn_id == turn_id) + 1
        taken = _Taken(turn_id, round_, context.system_prompt(), context.sections(), list(session.history), declarations, dict(pictures.rows))
        pictures.sent.append(taken)

    def reported(self, session: ChatSession, prompt_tokens: int | None) -> None:
        """The endpoint's prompt size for the chat's last request (None: it reported none)."""
        sent = session.slot(SLOT).sent
        if sent:
            sent[-1].reported = prompt_tokens

    def changes(self, turn: Turn, features: Sequence[Feature]) -> list[ContextChange]:
        """What this answered turn's context holds that the previous turn's did not; the skills noted as seen.

        A skill is news when its instructions were loaded, or when a file switched it on (a conditional
        skill) and the listing named it for the first time: "skill api-conventions (opened src/api/users.py)".
        """
        pictures = turn.session.slot(SLOT)
        # Read once a turn, after its answer, from the last request it sent (not before every request: it walks the history).
        skills = loaded_skills(pictures.sent[-1].history) if pictures.sent else frozenset()
        listed = turn.session.skills_tracker.told
        opened = {name: rel for name in listed - pictures.listed_before if (rel := self._skills.opened_by(name))}
        out = []
        for name in sorted((skills - pictures.skills_before) | opened.keys()):
            path = self._skills.skill_path(name)
            label = f"skill {name}" + (f" (opened {opened[name]})" if name in opened else "")
            out.append(ContextChange(kind="skill", label=label, sources=[path] if path else []))
        pictures.skills_before, pictures.listed_before = skills, listed
        return out + [c for f in features for c in f.context_changes(turn)]

    def of(self, session: ChatSession) -> list[SentRequest]:
        """The chat's last requests, counted (each once)."""
        out = []
        for t in session.slot(SLOT).sent:
            if t.counted is None:
                t.counted = self._parts(t.system, t.sections, t.history, t.declarations, t.rows)
            total = sum(p.tokens for p in t.counted)
            out.append(SentRequest(turn_id=t.turn_id, round=t.round, parts=t.counted, total_tokens=total, reported_tokens=t.reported))
        return out


def _drop_gone(pictures: ChatPictures, history: Sequence[Content]) -> None:
    """Forget tags of texts no longer in the history (a compression dropped them), so the map stays bounded."""
    if len(pictures.rows) < 64:
        return
    present = {p["text"] for c in history for p in c.get("parts") or [] if "text" in p}
    pictures.rows = {t: r for t, r in pictures.rows.items() if t in present}
