"""Resume answers tool calls whose results were never recorded (a kill between the call and its result)."""

from __future__ import annotations

from qwen_lsp.llm.content import to_openai_messages
from qwen_lsp.sessions.orphans import UNKNOWN_OUTCOME, answer_orphaned_calls


def call(call_id: str) -> dict:
    return {"functionCall": {"id": call_id, "name": "write_file", "args": {}}}


def response(call_id: str) -> dict:
    return {"functionResponse": {"id": call_id, "name": "write_file", "response": {"output": "ok"}}}


def test_a_trailing_call_without_result_gets_an_error_response_and_the_wire_pairs_it() -> None:
    history = [{"role": "user", "parts": [{"text": "edit"}]}, {"role": "model", "parts": [{"text": "Editing."}, call("c1")]}]
    repaired = answer_orphaned_calls(history)
    assert repaired[-1] == {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "write_file", "response": {"error": UNKNOWN_OUTCOME}}}]}
    assert len(history) == 2  # the input is untouched
    wire = to_openai_messages("sys", [*repaired, {"role": "user", "parts": [{"text": "next"}]}])
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "user"]
    assert wire[3]["tool_call_id"] == "c1"


def test_responses_split_over_records_count_and_only_the_missing_one_is_added_before_the_next_prompt() -> None:
    history = [
        {"role": "user", "parts": [{"text": "two edits"}]},
        {"role": "model", "parts": [call("a"), call("b"), call("c")]},
        {"role": "user", "parts": [response("a")]},
        {"role": "user", "parts": [response("b")]},
        {"role": "user", "parts": [{"text": "a later prompt"}]},
    ]
    repaired = answer_orphaned_calls(history)
    assert repaired[:4] == history[:4]
    assert [p["functionResponse"]["id"] for p in repaired[4]["parts"]] == ["c"]
    assert repaired[5] == history[4]


def test_a_complete_history_comes_back_unchanged() -> None:
    history = [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [call("a")]},
        {"role": "user", "parts": [response("a")]},
        {"role": "model", "parts": [{"text": "done"}]},
    ]
    assert answer_orphaned_calls(history) == history
