"""The Chat Completions client against the scripted server (real HTTP and SSE)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import ssl
from collections.abc import AsyncIterator

import httpx
import pytest
from support.scripted_openai import Cut, HttpError, Raw, Reply, ScriptedOpenAI, Stall, ToolCallSpec

from qwen_lsp.llm.client import (
    ChatClient,
    FinishEvent,
    StreamEvent,
    TextDelta,
    ThoughtDelta,
    Timeouts,
    ToolCallEvent,
    UsageEvent,
    _ChunkReader,
    _tls_verification,
)
from qwen_lsp.llm.errors import LLMError

HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
async def client(scripted: ScriptedOpenAI) -> AsyncIterator[ChatClient]:
    async with ChatClient(scripted.base_url, "sk-test", "qwen-test", retry_base=0.01) as chat:
        yield chat


async def collect(chat: ChatClient, **kwargs) -> list[StreamEvent]:
    return [event async for event in chat.stream(HI, **kwargs)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_text_streams_in_order_without_empty_deltas(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    scripted.enqueue(Reply(chunks=["Hel", "lo", " world"], usage={"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}))
    events = await collect(client)
    assert events == [TextDelta("Hel"), TextDelta("lo"), TextDelta(" world"), UsageEvent(11, 3, 14), FinishEvent("stop")]


async def test_request_shape_and_auth(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    await collect(client, tools=tools, max_tokens=50, temperature=0.2, extra_body={"top_p": 0.9})
    request = scripted.requests[-1]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body == {
        "model": "qwen-test",
        "messages": HI,
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": tools,
        "max_tokens": 50,
        "temperature": 0.2,
        "top_p": 0.9,
    }


async def test_no_key_no_authorization_header(scripted: ScriptedOpenAI) -> None:
    async with ChatClient(scripted.base_url, None, "m") as chat:
        await collect(chat)
    assert "authorization" not in scripted.requests[-1].headers
    assert "tools" not in scripted.requests[-1].body


async def test_tool_calls_accumulate_across_deltas(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    scripted.enqueue(
        Reply(
            chunks=["Let me look."],
            tool_calls=[ToolCallSpec("read_file", {"path": "src/app.py", "offset": 10}, id="c1"), ToolCallSpec("glob", {"pattern": "**/*.md"})],
            split_tool_args=5,
        )
    )
    events = await collect(client)
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert calls == [
        ToolCallEvent("c1", "read_file", {"path": "src/app.py", "offset": 10}, '{"path": "src/app.py", "offset": 10}'),
        ToolCallEvent("call_scripted_1", "glob", {"pattern": "**/*.md"}, '{"pattern": "**/*.md"}'),
    ]
    assert events[0] == TextDelta("Let me look.")
    assert events[-1] == FinishEvent("tool_calls")


async def test_invalid_tool_arguments_keep_raw_and_warn(scripted: ScriptedOpenAI, client: ChatClient, caplog: pytest.LogCaptureFixture) -> None:
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("edit", '{"path": "a.py", "old": ')]))
    with caplog.at_level(logging.WARNING, logger="qwen_lsp.llm.client"):
        events = await collect(client)
    (call,) = [e for e in events if isinstance(e, ToolCallEvent)]
    assert call.arguments == {}
    assert call.raw_arguments == '{"path": "a.py", "old": '
    assert call.arguments_error is not None and "not valid JSON" in call.arguments_error
    assert "not valid JSON" in caplog.text


async def test_reasoning_becomes_thought_deltas(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    scripted.enqueue(Reply(chunks=["42"], reasoning=["Let me ", "think."]))
    events = await collect(client)
    assert [e for e in events if isinstance(e, ThoughtDelta | TextDelta)] == [ThoughtDelta("Let me "), ThoughtDelta("think."), TextDelta("42")]


@pytest.mark.parametrize(("scripted_reason", "expected"), [("length", "length"), ("none", "stop"), ("content_filter", "content_filter"), ("max_tokens", "length")])
async def test_finish_reasons(scripted: ScriptedOpenAI, client: ChatClient, scripted_reason: str, expected: str) -> None:
    scripted.enqueue(Reply(chunks=["x"], finish_reason=scripted_reason))
    events = await collect(client)
    assert events[-1] == FinishEvent(expected)


def test_chunk_reader_handles_reasoning_field_and_sparse_pieces() -> None:
    reader = _ChunkReader("http://h/v1")
    events = reader.feed({"choices": [{"delta": {"reasoning": "hm", "content": ""}}]})
    assert events == [ThoughtDelta("hm")]
    reader.feed({"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g", "arguments": "{}"}}]}}]})
    reader.feed({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"x"'}}]}}]})
    reader.feed({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": ":1}"}}]}, "finish_reason": "function_call"}]})
    closing = reader.finish(saw_done=False)
    assert closing == [ToolCallEvent("a", "f", {"x": 1}, '{"x":1}'), ToolCallEvent("b", "g", {}, "{}"), FinishEvent("tool_calls")]


def test_chunk_reader_rejects_a_stream_cut_before_finish() -> None:
    reader = _ChunkReader("http://h/v1")
    reader.feed({"choices": [{"delta": {"content": "par"}}]})
    with pytest.raises(LLMError) as info:
        reader.finish(saw_done=False)
    assert info.value.kind == "protocol"


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors_are_actionable_and_not_retried(scripted: ScriptedOpenAI, client: ChatClient, status: int) -> None:
    scripted.enqueue(HttpError(status, "Incorrect API key provided"))
    with pytest.raises(LLMError) as info:
        await collect(client)
    error = info.value
    assert (error.kind, error.status) == ("auth", status)
    assert str(error).startswith(f"The API key was rejected by {scripted.base_url} (HTTP {status}). Check OPENAI_API_KEY or model.apiKey.")
    assert "Incorrect API key provided" in str(error)
    assert len(scripted.chat_requests()) == 1


async def test_not_found_names_model_and_base_url(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    scripted.enqueue(HttpError(404, "The model `qwen-test` does not exist"))
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "not_found"
    assert f"Model 'qwen-test' or path not found at {scripted.base_url} (HTTP 404)" in str(info.value)
    assert "it usually ends in /v1" in str(info.value)
    assert "does not exist" in str(info.value)


@pytest.mark.parametrize("first", [HttpError(429, "slow down", {"Retry-After": "0"}), HttpError(500, "boom"), HttpError(503, "busy")])
async def test_retryable_errors_then_success(scripted: ScriptedOpenAI, client: ChatClient, first: HttpError) -> None:
    scripted.enqueue(first, Reply(chunks=["fine"]))
    events = await collect(client)
    assert TextDelta("fine") in events
    assert len(scripted.chat_requests()) == 2


async def test_retries_give_up_after_max_retries(scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(*[HttpError(500, "down")] * 3)
    async with ChatClient(scripted.base_url, "k", "m", max_retries=2, retry_base=0.01) as chat:
        with pytest.raises(LLMError) as info:
            await collect(chat)
    assert (info.value.kind, info.value.status) == ("server", 500)
    assert "down" in str(info.value)
    assert len(scripted.chat_requests()) == 3


async def test_bad_request_not_retried_and_server_text_truncated(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    scripted.enqueue(HttpError(400, "context length exceeded " + "x" * 1000))
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "bad_request"
    assert "context length exceeded" in str(info.value)
    assert len(str(info.value)) < 450
    assert len(scripted.chat_requests()) == 1


async def test_connection_refused_fails_fast() -> None:
    base = f"http://127.0.0.1:{free_port()}/v1"
    async with ChatClient(base, "k", "m", retry_base=5) as chat:
        with pytest.raises(LLMError) as info:
            await collect(chat)
        assert info.value.kind == "connect"
        assert str(info.value) == f"Nothing is listening at {base}. Start the model server or fix model.baseUrl / OPENAI_BASE_URL."
        with pytest.raises(LLMError) as models_info:
            await chat.list_models()
        assert models_info.value.kind == "connect"


async def test_stall_timeout_closes_the_stream(scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Stall(["partial"]))
    seen: list[StreamEvent] = []
    async with ChatClient(scripted.base_url, "k", "m", timeouts=Timeouts(stall=0.3)) as chat:
        with pytest.raises(LLMError) as info:
            async for event in chat.stream(HI):
                seen.append(event)
    assert seen == [TextDelta("partial")]
    assert info.value.kind == "stall"
    assert "The model stopped sending data for 0.3 s (stall timeout)." in str(info.value)
    assert scripted.wait_for_disconnect(5)
    assert len(scripted.chat_requests()) == 1  # never retried after streaming started


async def test_first_byte_timeout(scripted: ScriptedOpenAI) -> None:
    scripted.enqueue(Reply(first_delay=30))
    async with ChatClient(scripted.base_url, "k", "m", timeouts=Timeouts(first_byte=0.3)) as chat:
        with pytest.raises(LLMError) as info:
            await collect(chat)
    assert info.value.kind == "timeout"
    assert "first-byte timeout" in str(info.value) and "model.timeouts.firstByte" in str(info.value)
    assert scripted.wait_for_disconnect(5)


async def test_unresolvable_host_says_so() -> None:
    async with ChatClient("http://no-such-host.invalid/v1", "k", "m", retry_base=5) as chat:
        with pytest.raises(LLMError) as info:
            await collect(chat)
    assert info.value.kind == "connect"
    assert "'no-such-host.invalid'" in str(info.value) and "could not be resolved" in str(info.value)
    assert "Nothing is listening" not in str(info.value) and "model.baseUrl / OPENAI_BASE_URL" in str(info.value)


@pytest.mark.parametrize(
    ("base", "problem"),
    [
        ("localhost:8000/v1", "no http:// or https:// scheme"),
        ("not a url", "no http:// or https:// scheme"),
        ("file:///tmp/models", "'file' is not an HTTP scheme"),
        ("http:///v1", "names no host"),
    ],
)
def test_a_base_url_that_is_not_http_is_a_config_error_before_any_request(base: str, problem: str) -> None:
    with pytest.raises(LLMError) as info:
        ChatClient(base, "k", "m")
    assert info.value.kind == "config"
    assert problem in str(info.value) and "model.baseUrl / OPENAI_BASE_URL" in str(info.value)


async def test_cut_stream_is_a_protocol_error_and_not_retried(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    scripted.enqueue(Cut(["half an ans"]))
    seen: list[StreamEvent] = []
    with pytest.raises(LLMError) as info:
        async for event in client.stream(HI):
            seen.append(event)
    assert seen == [TextDelta("half an ans")]
    assert info.value.kind == "protocol"
    assert "The model's stream ended unexpectedly" in str(info.value)
    assert len(scripted.chat_requests()) == 1


async def test_cancelling_the_consumer_hangs_up_at_once(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    scripted.enqueue(Reply(chunks=[f"w{i} " for i in range(500)], delay=0.05))
    first = asyncio.Event()

    async def consume() -> None:
        async for event in client.stream(HI):
            if isinstance(event, TextDelta):
                first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(scripted.wait_for_disconnect, 5)


async def test_closing_the_generator_early_hangs_up(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    scripted.enqueue(Reply(chunks=[f"w{i} " for i in range(500)], delay=0.05))
    async with contextlib.aclosing(client.stream(HI)) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                break
    assert await asyncio.to_thread(scripted.wait_for_disconnect, 5)
    # The client stays usable afterwards.
    scripted.enqueue(Reply(chunks=["again"]))
    assert TextDelta("again") in await collect(client)


async def test_list_models(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    assert await client.list_models() == ["scripted-model"]
    assert scripted.requests[-1].method == "GET"
    assert scripted.requests[-1].path == "/v1/models"


async def test_many_turns_reuse_one_client(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    for i in range(5):
        scripted.enqueue(Reply(chunks=[f"turn {i}"]))
        assert TextDelta(f"turn {i}") in await collect(client)


async def test_a_web_page_instead_of_an_api_is_explained() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, html="<html>login</html>"))
    async with ChatClient("http://intranet.example/", None, "m", transport=transport) as chat:
        with pytest.raises(LLMError) as info:
            await collect(chat)
    assert info.value.kind == "protocol"
    assert "http://intranet.example answered with 'text/html" in str(info.value)


def _chunk(delta: object, finish: str | None = None) -> dict:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


async def test_length_inside_a_tool_call_drops_the_call(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    scripted.enqueue(Reply(chunks=["Let me edit."], tool_calls=[ToolCallSpec("edit", '{"path": "a.py", "old": "x', id="c1")], finish_reason="length"))
    events = await collect(client)
    assert not [e for e in events if isinstance(e, ToolCallEvent)]
    assert events[0] == TextDelta("Let me edit.") and events[-1] == FinishEvent("length")


async def test_arguments_that_are_not_json_say_so_with_a_bounded_excerpt(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    raw = '{"file_path": ' + "x" * 5000
    scripted.enqueue(Reply(chunks=[], tool_calls=[ToolCallSpec("read_file", raw)]))
    (call,) = [e for e in await collect(client) if isinstance(e, ToolCallEvent)]
    assert call.arguments == {} and call.arguments_error is not None
    assert "were not valid JSON" in call.arguments_error and '{"file_path": xxx' in call.arguments_error
    assert len(call.arguments_error) < 500


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": -5, "completion_tokens": -1, "total_tokens": -6}, UsageEvent(0, 0, 0)),
        ({"prompt_tokens": "abc", "completion_tokens": 3, "total_tokens": "abc"}, UsageEvent(0, 3, 3)),
        ({"prompt_tokens": 1e999, "completion_tokens": 2.0, "total_tokens": True}, UsageEvent(0, 2, 2)),
        # finite but absurd: counted as absent, not as an overflowing window
        ({"prompt_tokens": 10**20, "completion_tokens": 2**31, "total_tokens": 10**20 + 2**31}, UsageEvent(0, 0, 0)),
        ({"prompt_tokens": 2**31 - 1, "completion_tokens": 1, "total_tokens": 1e30}, UsageEvent(2**31 - 1, 1, 2**31)),
    ],
)
async def test_usage_is_clamped_and_junk_counts_as_absent(scripted: ScriptedOpenAI, client: ChatClient, usage: dict, expected: UsageEvent) -> None:
    # 1e999 is spelled raw: json.dumps would write "Infinity"
    text = json.dumps({"choices": [], "usage": usage}).replace("Infinity", "1e999")
    scripted.enqueue(Raw([_chunk({"content": "hi"}, "stop"), text]))
    events = await collect(client)
    assert [e for e in events if isinstance(e, UsageEvent)] == [expected]
    assert events[-1] == FinishEvent("stop")


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (_chunk("s"), "'delta' is not an object"),
        ({"choices": [None]}, "a choice is not an object"),
        ({"choices": "x"}, "'choices' is not a list"),
        (_chunk({"tool_calls": [None]}), "a tool call piece is not an object"),
        (_chunk({"tool_calls": {"index": 0}}), "'tool_calls' is not a list"),
        (_chunk({"tool_calls": [{"index": "1", "function": {"name": "f"}}]}), "a tool call index is str"),
        (_chunk({"tool_calls": [{"index": 0, "function": {"name": {"x": 1}, "arguments": "{}"}}]}), "a tool call name is not a string"),
        (_chunk({"tool_calls": [{"index": 0, "id": 7, "function": {"name": "f"}}]}), "a tool call id is not a string"),
        (_chunk({"tool_calls": [{"index": 0, "function": "f"}]}), "'function' is not an object"),
    ],
)
async def test_malformed_chunks_are_protocol_errors(scripted: ScriptedOpenAI, client: ChatClient, bad: dict, says: str) -> None:
    scripted.enqueue(Raw([_chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "g", "arguments": "{}"}}]}), bad, _chunk({}, "stop")]))
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "protocol"
    assert says in info.value.message and scripted.base_url in info.value.message
    assert "OpenAI" in info.value.message


async def test_early_eof_after_text_is_a_protocol_error(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    scripted.enqueue(Raw([_chunk({"content": "half"})], done=False))
    seen: list[StreamEvent] = []
    with pytest.raises(LLMError) as info:
        async for event in client.stream(HI):
            seen.append(event)
    assert seen == [TextDelta("half")] and info.value.kind == "protocol"


async def test_an_event_that_is_json_but_not_an_object_is_skipped_with_a_warning(
    scripted: ScriptedOpenAI, client: ChatClient, caplog: pytest.LogCaptureFixture
) -> None:
    scripted.enqueue(Raw([_chunk({"content": "a"}), "[1, 2]", '"text"', _chunk({"content": "b"}, "stop")]))
    with caplog.at_level(logging.WARNING, logger="qwen_lsp.llm.client"):
        events = await collect(client)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "ab"
    assert events[-1] == FinishEvent("stop")
    assert caplog.text.count("JSON but not an object") == 2


async def test_turns_reuse_one_connection(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    """The stream is read to its end after ``[DONE]``, so the next turn reuses the keep-alive connection
    (against a real provider, a new one is a TLS handshake per turn)."""
    for i in range(3):
        scripted.enqueue(Reply(chunks=[f"turn {i}"]))
        assert (await collect(client))[-1] == FinishEvent("stop")
    assert scripted.connections == 1


async def test_a_server_that_drops_the_connection_after_done_still_finishes(scripted: ScriptedOpenAI, client: ChatClient) -> None:
    """A body cut right after ``[DONE]`` (no end of the chunked body) is a finished turn; the next one connects again."""
    scripted.enqueue(Raw(events=[{"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}, "[DONE]"], done=False))
    assert (await collect(client))[-2:] == [TextDelta("hi"), FinishEvent("stop")]
    scripted.enqueue(Reply(chunks=["again"]))
    assert TextDelta("again") in await collect(client)
    assert scripted.connections == 2


def test_a_plain_http_endpoint_skips_the_ca_bundle_and_would_fail_tls_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """No TLS is ever used for http:// without a proxy, so the bundle is not loaded; the context given trusts nothing."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    context = _tls_verification("http://127.0.0.1:8000/v1")
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
    assert _tls_verification("https://dashscope.aliyuncs.com/compatible-mode/v1") is True
    assert _tls_verification("HTTPS://example.com/v1") is True


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "http_proxy", "ALL_PROXY"])
def test_any_proxy_keeps_the_default_verification(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    """A proxy may be reached over TLS with the endpoint's verification: it must be the real one."""
    monkeypatch.setenv(variable, "https://proxy.example:3128")
    assert _tls_verification("http://127.0.0.1:8000/v1") is True


async def test_sampling_params_and_max_tokens_ride_every_request(scripted: ScriptedOpenAI) -> None:
    """Qwen Code 0.24.4's ``buildGenerateContentConfig``: configured sampling values win over a caller's,
    and ``max_tokens`` is the smaller of the configured one and the caller's, else whichever is set."""
    from qwen_lsp.llm.client_cache import sampling_of
    from qwen_lsp.settings.config import LoadedSettings, Settings

    def body_keys(body: dict) -> dict:
        return {k: body.get(k) for k in ("temperature", "top_p", "top_k", "max_tokens")}

    configured = Settings.model_validate({"model": {"name": "qwen3-coder-plus", "generationConfig": {"samplingParams": {"temperature": 0.3, "top_p": 0.9, "max_tokens": 1234}}}})
    async with ChatClient(scripted.base_url, None, "qwen3-coder-plus", sampling=sampling_of(LoadedSettings(configured))) as chat:
        await collect(chat)  # a caller with no budget (a side query)
        await collect(chat, temperature=0.0, max_tokens=300)  # a side query's own values
        await collect(chat, max_tokens=5000)  # a turn's budget above the configured cap
    assert [body_keys(r.body) for r in scripted.requests[-3:]] == [
        {"temperature": 0.3, "top_p": 0.9, "top_k": None, "max_tokens": 1234},
        {"temperature": 0.3, "top_p": 0.9, "top_k": None, "max_tokens": 300},
        {"temperature": 0.3, "top_p": 0.9, "top_k": None, "max_tokens": 1234},
    ]
    plain = Settings.model_validate({"model": {"name": "qwen3-coder-plus"}})
    async with ChatClient(scripted.base_url, None, "qwen3-coder-plus", sampling=sampling_of(LoadedSettings(plain))) as chat:
        await collect(chat)
        await collect(chat, temperature=0.0, max_tokens=300)
    assert [body_keys(r.body) for r in scripted.requests[-2:]] == [
        {"temperature": None, "top_p": None, "top_k": None, "max_tokens": 32_768},  # 0.24.4's output limit for qwen…
        {"temperature": 0.0, "top_p": None, "top_k": None, "max_tokens": 300},
    ]


@pytest.mark.parametrize(
    "model, ceiling",
    [("scripted-model", 32_000), ("qwen3-coder-plus", 32_768), ("qwen3.5-plus", 64_000), ("gpt-5", 64_000), ("claude-opus-4-6", 128_000), ("deepseek-v4", 64_000), ("deepseek-chat", 8_192), ("MiniMax-M2.5", 64_000)],
)
def test_the_default_output_ceiling_is_qwen_codes(model: str, ceiling: int) -> None:
    from qwen_lsp.llm.sampling import clamp_output_tokens, default_output_ceiling

    assert default_output_ceiling(model) == ceiling
    assert clamp_output_tokens(ceiling, 200_000, 190_000) == 4_000  # never below 0.24.4's floor
    assert clamp_output_tokens(32_000, 200_000, 170_000) == 20_000  # the window left after a 10,000-token margin
    assert clamp_output_tokens(32_000, 1_000_000, 100_000) == 32_000
