"""Side queries: one model request beside the chat, no tools, no history, its own timeout.

Recall's selector and forget's candidate selection ask the model a small
question whose answer is JSON (Qwen Code's ``runSideQuery``). A side query
never touches the chat: it sends a system and a user message, no ``tools``
array, and returns the answer's text. Thinking is off: reasoning deltas are
dropped from the answer, and ``extra_body`` can carry the endpoint's own
switch (e.g. ``{"enable_thinking": false}`` for DashScope or vLLM; plain
OpenAI rejects unknown keys, so nothing is sent by default).

With a JSON schema the request asks for a JSON object
(``response_format: json_object``, which OpenAI, DashScope and vLLM accept)
and the answer is validated against the schema's structural keywords
(``type``, ``properties``, ``required``, ``items``, ``enum``); anything else
raises :class:`SideQueryError` with kind ``invalid_json``, so the caller
falls back (recall to its heuristic) instead of trusting a malformed answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Literal, Protocol

from ..llm.client import StreamEvent, TextDelta
from ..llm.errors import LLMError
from ..llm.json_answer import parse_json_answer

SideQueryErrorKind = Literal["timeout", "invalid_json", "model", "empty"]

MAX_ANSWER_CHARS = 200_000
"""A side answer is a few hundred characters; a runaway stream is cut here and counts as invalid."""

_MAX_SCHEMA_DEPTH = 32


class SideQueryError(Exception):
    def __init__(self, kind: SideQueryErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: SideQueryErrorKind = kind
        self.message = message


class SideModel(Protocol):
    def stream(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]: ...


class SideQuery:
    """A callable matching recall's ``SideQuery`` protocol; build one per model client."""

    def __init__(
        self,
        model: SideModel,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        self._model = model
        self._max_tokens = max_tokens
        self._temperature = temperature
        self._extra_body = dict(extra_body or {})

    async def __call__(
        self, *, system: str, user: str, json_schema: Mapping[str, Any] | None, timeout: float
    ) -> str:
        """The answer text; with ``json_schema``, the validated JSON re-serialised compactly.

        Raises :class:`SideQueryError`: ``timeout`` past ``timeout`` seconds,
        ``model`` when the request failed, ``empty`` for an answer with no
        text, ``invalid_json`` when the answer does not parse or does not fit
        the schema. Cancelling the awaiting task closes the request at once.
        """
        extra = dict(self._extra_body)
        if json_schema is not None:
            extra["response_format"] = {"type": "json_object"}
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        try:
            async with asyncio.timeout(timeout):
                text = await self._collect(messages, extra)
        except TimeoutError:
            raise SideQueryError("timeout", f"The side query got no complete answer within {timeout:g} s.") from None
        except LLMError as exc:
            raise SideQueryError("model", exc.message) from exc
        if not text.strip():
            raise SideQueryError("empty", "The side query's answer was empty.")
        if json_schema is None:
            return text.strip()
        try:
            value = parse_json_answer(text)
        except ValueError as exc:
            raise SideQueryError("invalid_json", f"The side query's answer is not valid JSON ({exc}).") from None
        problem = schema_problem(value, json_schema, "$", 0)
        if problem is not None:
            raise SideQueryError("invalid_json", f"The side query's answer does not fit its schema: {problem}.")
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    async def _collect(self, messages: list[dict[str, str]], extra: dict[str, Any]) -> str:
        parts: list[str] = []
        size = 0
        stream = self._model.stream(messages, tools=None, max_tokens=self._max_tokens, temperature=self._temperature, extra_body=extra or None)
        async with contextlib.aclosing(stream) as events:  # type: ignore[type-var]
            async for event in events:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                    size += len(event.text)
                    if size > MAX_ANSWER_CHARS:
                        raise SideQueryError("invalid_json", f"The side query's answer exceeded {MAX_ANSWER_CHARS} characters.")
        return "".join(parts)


class SchemaModel(Protocol):
    async def complete(
        self,
        messages: Sequence[Mapping[str, object]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: dict[str, Any] | None = None,
        max_retries: int | None = 0,
    ) -> dict[str, Any]: ...


SCHEMA_TOOL = "respond_in_schema"
NO_THINKING = {"chat_template_kwargs": {"enable_thinking": False}}


async def respond_in_schema(
    model: SchemaModel, *, system: str, messages: Sequence[str], schema: Mapping[str, Any], max_tokens: int, timeout: float
) -> dict[str, Any]:
    """Qwen Code 0.24.4's structured side query (``runSideQuery`` with a schema, as its auto-mode classifier sends it):
    not streamed, temperature 0, thinking off, one ``respond_in_schema`` tool the model must call
    (``tool_choice: "required"``); each of ``messages`` one user message. The tool call's arguments (or, from an
    endpoint that ignores tool choice, a JSON answer in the text) must fit ``schema``; else :class:`SideQueryError`."""
    tool = {"type": "function", "function": {"name": SCHEMA_TOOL, "description": "Provide the response in provided schema", "parameters": dict(schema)}}
    body: list[dict[str, object]] = [{"role": "system", "content": system}]
    body.extend({"role": "user", "content": [{"type": "text", "text": m}]} for m in messages)
    try:
        async with asyncio.timeout(timeout):
            message = await model.complete(body, tools=[tool], tool_choice="required", max_tokens=max_tokens, temperature=0, extra_body=dict(NO_THINKING))
    except TimeoutError:
        raise SideQueryError("timeout", f"The side query got no answer within {timeout:g} s.") from None
    except LLMError as exc:
        raise SideQueryError("model", exc.message) from exc
    calls = message.get("tool_calls") or []
    raw = next((c.get("function", {}).get("arguments") for c in calls if isinstance(c, dict) and c.get("function", {}).get("name") == SCHEMA_TOOL), None)
    if raw is None:
        raw = message.get("content")
    if not isinstance(raw, str) or not raw.strip():
        raise SideQueryError("empty", "The side query's answer was empty.")
    try:
        value = parse_json_answer(raw[:MAX_ANSWER_CHARS])
    except ValueError as exc:
        raise SideQueryError("invalid_json", f"The side query's answer is not valid JSON ({exc}).") from None
    problem = schema_problem(value, schema, "$", 0)
    if problem is not None or not isinstance(value, dict):
        raise SideQueryError("invalid_json", f"The side query's answer does not fit its schema: {problem or 'not an object'}.")
    return value


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_problem(value: Any, schema: Mapping[str, Any], where: str, depth: int) -> str | None:
    """The first way ``value`` breaks ``schema`` (structural keywords only), or None."""
    if depth > _MAX_SCHEMA_DEPTH:
        return f"{where} is nested too deeply"
    expected = schema.get("type")
    if isinstance(expected, str) and expected in _TYPES:
        is_bool = isinstance(value, bool)
        ok = isinstance(value, _TYPES[expected]) and (expected == "boolean" or not is_bool)
        if not ok:
            return f"{where} should be {expected}"
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        return f"{where} is not one of the allowed values"
    if isinstance(value, dict):
        for key in schema.get("required") or ():
            if key not in value:
                return f"{where} lacks '{key}'"
        properties = schema.get("properties") or {}
        for key, sub in properties.items():
            if key in value and isinstance(sub, Mapping):
                problem = schema_problem(value[key], sub, f"{where}.{key}", depth + 1)
                if problem is not None:
                    return problem
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            problem = schema_problem(item, schema["items"], f"{where}[{index}]", depth + 1)
            if problem is not None:
                return problem
    return None
