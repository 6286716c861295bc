"""History format and its conversion to Chat Completions messages."""

from __future__ import annotations

import copy
import json

from hypothesis import given
from hypothesis import strategies as st

from qwen_lsp.llm.content import Content, model_text, text_of, to_openai_messages, user_text


def call(id_: str, name: str, args: dict) -> dict:
    return {"functionCall": {"id": id_, "name": name, "args": args}}


def result(id_: str, name: str, **response: str) -> dict:
    return {"functionResponse": {"id": id_, "name": name, "response": response}}


def test_helpers_build_recorded_shape() -> None:
    assert user_text("hi") == {"role": "user", "parts": [{"text": "hi"}]}
    assert model_text("yo") == {"role": "model", "parts": [{"text": "yo"}]}
    content: Content = {"role": "model", "parts": [{"text": "think", "thought": True}, {"text": "a"}, call("1", "f", {}), {"text": "b"}]}
    assert text_of(content) == "ab"


def test_system_first_then_turns() -> None:
    messages = to_openai_messages("SYS", [user_text("hi"), model_text("hello")])
    assert messages == [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    assert to_openai_messages(None, [user_text("x")]) == [{"role": "user", "content": "x"}]


def test_tool_calls_and_responses() -> None:
    history: list[Content] = [
        user_text("read it"),
        {"role": "model", "parts": [{"text": "Reading."}, call("c1", "read_file", {"path": "a.py", "limit": 5}), call("c2", "glob", {"pattern": "*"})]},
        {"role": "user", "parts": [result("c1", "read_file", output="print(1)"), result("c2", "glob", error="bad pattern")]},
        {"role": "model", "parts": [call("c3", "ls", {"z": 1, "a": [1, {"b": "é"}]})]},
    ]
    messages = to_openai_messages(None, history)
    assert messages[1] == {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"a.py","limit":5}'}},
            {"id": "c2", "type": "function", "function": {"name": "glob", "arguments": '{"pattern":"*"}'}},
        ],
    }
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "print(1)"}
    assert messages[3] == {"role": "tool", "tool_call_id": "c2", "content": "bad pattern"}
    # Tool-call-only turn: content is null; key order of args kept as given, non-ASCII kept.
    assert messages[4]["content"] is None
    assert messages[4]["tool_calls"][0]["function"]["arguments"] == '{"z":1,"a":[1,{"b":"é"}]}'


def test_thoughts_are_not_sent() -> None:
    history: list[Content] = [
        user_text("q"),
        {"role": "model", "parts": [{"text": "secret plan", "thought": True}]},
        {"role": "model", "parts": [{"text": "mull", "thought": True}, {"text": "answer"}]},
    ]
    messages = to_openai_messages(None, history)
    assert messages == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "answer"}]
    assert "secret plan" not in json.dumps(messages)


def test_tool_results_come_before_user_text_and_text_parts_stay_separate() -> None:
    content: Content = {"role": "user", "parts": [{"text": "<system-reminder>x</system-reminder>"}, result("c1", "f", output="r"), {"text": "next"}]}
    messages = to_openai_messages(None, [content])
    assert messages == [
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
        {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"}, {"type": "text", "text": "next"}]},
    ]


def test_round_trip_through_jsonl_gives_same_bytes() -> None:
    history: list[Content] = [user_text("a"), {"role": "model", "parts": [call("c", "f", {"b": 2, "a": 1})]}, {"role": "user", "parts": [result("c", "f", output="o")]}]
    reloaded = [json.loads(json.dumps(c)) for c in history]
    assert json.dumps(to_openai_messages("s", reloaded)) == json.dumps(to_openai_messages("s", history))


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
json_values = st.recursive(json_scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3), max_leaves=8)
parts = st.one_of(
    st.builds(lambda t: {"text": t}, st.text(max_size=20)),
    st.builds(lambda t: {"text": t, "thought": True}, st.text(max_size=20)),
    st.builds(lambda i, n, a: call(i, n, a), st.text(max_size=6), st.text(max_size=6), st.dictionaries(st.text(max_size=5), json_values, max_size=4)),
    st.builds(lambda i, o: result(i, "f", output=o), st.text(max_size=6), st.text(max_size=20)),
)
contents = st.builds(lambda role, ps: {"role": role, "parts": ps}, st.sampled_from(["user", "model"]), st.lists(parts, max_size=4))


@given(st.one_of(st.none(), st.text(max_size=20)), st.lists(contents, max_size=6))
def test_conversion_is_deterministic_and_pure(system: str | None, history: list[Content]) -> None:
    before = copy.deepcopy(history)
    first = json.dumps(to_openai_messages(system, history), ensure_ascii=False)
    second = json.dumps(to_openai_messages(system, copy.deepcopy(history)), ensure_ascii=False)
    assert first == second
    assert history == before  # input untouched
    for message in json.loads(first):
        for tool_call in message.get("tool_calls", []):
            json.loads(tool_call["function"]["arguments"])  # always valid JSON


def test_consecutive_user_contents_are_merged_into_one_message():
    """A turn cancelled before any answer leaves two user Contents in a row."""
    history = [
        {"role": "user", "parts": [{"text": "first, cancelled"}]},
        {"role": "user", "parts": [{"text": "<system-reminder>x</system-reminder>"}, {"text": "second"}]},
        {"role": "model", "parts": [{"text": "answer"}]},
    ]
    messages = to_openai_messages("sys", history)
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "first, cancelled"},
        {"type": "text", "text": "<system-reminder>x</system-reminder>"},
        {"type": "text", "text": "second"},
    ]
    assert to_openai_messages("sys", history) == messages  # still deterministic
