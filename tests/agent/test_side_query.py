"""The side query against the scripted server: no tools, thinking dropped, JSON validated, its own timeout."""

from __future__ import annotations

import asyncio

import pytest
from support.scripted_openai import HttpError, Reply, ScriptedOpenAI, Stall

from qwen_lsp.agent.side_query import SideQuery, SideQueryError
from qwen_lsp.llm.client import ChatClient

SCHEMA = {
    "type": "object",
    "properties": {"selected": {"type": "array", "items": {"type": "string"}}, "reasoning": {"type": "string"}},
    "required": ["selected"],
}


async def ask(scripted: ScriptedOpenAI, reply: object, schema: object = SCHEMA, timeout: float = 10.0) -> str:
    scripted.enqueue(reply)  # type: ignore[arg-type]
    async with ChatClient(scripted.base_url, "k", "scripted-model", max_retries=0) as client:
        return await SideQuery(client, extra_body={"enable_thinking": False})(system="pick", user="docs", json_schema=schema, timeout=timeout)  # type: ignore[arg-type]


async def test_a_json_answer_is_validated_and_returned_compact(scripted: ScriptedOpenAI) -> None:
    answer = await ask(scripted, Reply(reasoning=["let me think"], chunks=['```json\n{"selected": ["a.md"],', ' "reasoning": "x"}\n```']))
    assert answer == '{"selected":["a.md"],"reasoning":"x"}'
    body = scripted.chat_requests()[0].body
    assert "tools" not in body and body["enable_thinking"] is False and body["response_format"] == {"type": "json_object"}
    assert body["messages"] == [{"role": "system", "content": "pick"}, {"role": "user", "content": "docs"}]


async def test_a_text_answer_drops_the_thinking(scripted: ScriptedOpenAI) -> None:
    assert await ask(scripted, Reply(reasoning=["hidden"], chunks=[" plain answer "]), schema=None) == "plain answer"
    assert "response_format" not in scripted.chat_requests()[0].body


@pytest.mark.parametrize(
    ("chunks", "problem"),
    [
        (["not json"], "not valid JSON"),
        (['{"reasoning": "no selection"}'], "lacks 'selected'"),
        (['{"selected": [1]}'], "$.selected[0] should be string"),
        (['["a"]'], "$ should be object"),
    ],
)
async def test_an_answer_that_breaks_the_schema_is_a_typed_error(scripted: ScriptedOpenAI, chunks: list[str], problem: str) -> None:
    with pytest.raises(SideQueryError) as info:
        await ask(scripted, Reply(chunks=chunks))
    assert info.value.kind == "invalid_json" and problem in info.value.message


async def test_the_timeout_and_a_model_failure_are_typed_errors(scripted: ScriptedOpenAI) -> None:
    with pytest.raises(SideQueryError) as info:
        await ask(scripted, Stall(), timeout=0.3)
    assert info.value.kind == "timeout"
    assert scripted.wait_for_disconnect()
    with pytest.raises(SideQueryError) as failed:
        await ask(scripted, HttpError(401, "bad key"))
    assert failed.value.kind == "model"


async def test_an_empty_answer_is_an_error_and_a_cancel_hangs_up(scripted: ScriptedOpenAI) -> None:
    with pytest.raises(SideQueryError) as info:
        await ask(scripted, Reply(reasoning=["only thinking"], chunks=[]), schema=None)
    assert info.value.kind == "empty"
    query = asyncio.create_task(ask(scripted, Stall(chunks=["{"]), timeout=30))
    while len(scripted.chat_requests()) < 2:
        await asyncio.sleep(0.01)
    query.cancel()
    with pytest.raises(asyncio.CancelledError):
        await query
    assert scripted.wait_for_disconnect()
