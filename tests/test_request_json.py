"""Request bodies encoded with remembered long strings are byte for byte what ``json.dumps`` gives."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from qwen_lsp.llm import request_json
from qwen_lsp.llm.request_json import RequestEncoder


def reference(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


LONG_TEXT = st.text(min_size=request_json.LONG, max_size=request_json.LONG + 50)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20) | LONG_TEXT
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4) | st.tuples(inner, inner),
    max_leaves=30,
)


@settings(max_examples=200)
@given(st.dictionaries(st.text(max_size=8), VALUES, max_size=6))
def test_any_body_encodes_as_json_dumps_does(body: dict[str, Any]) -> None:
    encoder = RequestEncoder()
    assert encoder.encode(body) == reference(body)
    assert encoder.encode(body) == reference(body)  # again, from the remembered strings


def test_a_growing_chat_reuses_its_texts_and_stays_exact() -> None:
    encoder = RequestEncoder()
    system = "You are a careful assistant. " * 100
    history: list[dict[str, Any]] = []
    for n in range(30):
        history.append({"role": "user", "content": [{"type": "text", "text": f"<system-reminder>{n}</system-reminder>"}, {"type": "text", "text": f"Look at file {n}: é\n" * 200}]})
        history.append({"role": "assistant", "content": None, "tool_calls": [{"id": f"c{n}", "type": "function", "function": {"name": "read_file", "arguments": "{\"file_path\":\"/w/a.py\"}"}}]})
        history.append({"role": "tool", "tool_call_id": f"c{n}", "content": "def f():\n    return '\\u2028 \"quoted\"'\n" * 100})
        body = {"model": "m", "messages": [{"role": "system", "content": system}, *history], "stream": True, "tools": [{"type": "function", "function": {"name": "x", "parameters": {"type": "object", "properties": {"a": {"type": "string", "description": "d" * 2000}}}}}]}
        assert encoder.encode(body) == reference(body)


def test_a_reused_id_is_never_served_the_old_encoding() -> None:
    encoder = RequestEncoder()
    for n in range(50):  # each text dies after its request, so CPython may hand its id to the next one
        text = f"{n:04d}" + "x" * request_json.LONG
        assert encoder.encode({"content": text}) == reference({"content": text})
        del text


def test_the_remembered_strings_are_bounded() -> None:
    encoder = RequestEncoder()
    texts = [f"{n}" + "y" * request_json.LONG for n in range(request_json.CACHE_ENTRIES + 10)]
    encoder.encode({"messages": [{"content": text} for text in texts]})
    assert len(encoder._strings) == request_json.CACHE_ENTRIES


def test_the_remembered_short_strings_are_bounded_and_stay_exact() -> None:
    encoder = RequestEncoder()
    shorts = [f"id-{n}\u2028\"" for n in range(request_json.SHORT_ENTRIES + 10)]
    body = {"messages": [{"tool_call_id": s} for s in shorts]}
    assert encoder.encode(body) == reference(body)
    assert len(encoder._shorts) <= request_json.SHORT_ENTRIES
    assert encoder.encode(body) == reference(body)
    middle = {"content": "m" * (request_json.SHORT + 1)}
    assert encoder.encode(middle) == reference(middle)
    assert middle["content"] not in encoder._shorts  # longer texts are not kept alive by value


def test_strings_no_recent_request_used_are_dropped() -> None:
    """A compacted history's texts must not stay alive in the cache (the soak test's flat heap)."""
    encoder = RequestEncoder()
    old = "old" + "z" * request_json.LONG
    encoder.encode({"content": old})
    kept = "kept" + "k" * request_json.LONG
    for _ in range(request_json.KEEP_REQUESTS):
        encoder.encode({"content": kept})
    assert [entry[0] for entry in encoder._strings.values()] == [kept]


@settings(max_examples=100)
@given(st.lists(st.dictionaries(st.text(max_size=8), VALUES, max_size=4), max_size=5))
def test_a_frozen_tools_array_encodes_as_json_dumps_does_every_time(tools: list[dict[str, Any]]) -> None:
    encoder = RequestEncoder()
    frozen = request_json.FrozenJSON(tools)
    for text in ("first", "second", "third"):
        body = {"model": "m", "messages": [{"role": "user", "content": text}], "tools": frozen}
        assert encoder.encode(body) == reference(body)


def test_a_frozen_array_cannot_change_under_its_remembered_json() -> None:
    frozen = request_json.FrozenJSON([{"type": "function"}])
    for change in (
        lambda: frozen.append({}),
        lambda: frozen.extend([{}]),
        lambda: frozen.__setitem__(0, {}),
        lambda: frozen.pop(),
        lambda: frozen.clear(),
        lambda: frozen.__delitem__(0),
        lambda: frozen.__iadd__([{}]),
    ):
        try:
            change()
        except TypeError:
            pass
        else:
            raise AssertionError("a FrozenJSON array was changed")
    assert frozen == [{"type": "function"}]
    copied = copy.deepcopy(frozen)
    assert copied == frozen and copied[0] is not frozen[0]
    assert pickle.loads(pickle.dumps(frozen)) == frozen
