"""Incremental history counts agree with counting from scratch, through appends and in-place replacement."""

from __future__ import annotations

from typing import Any

from qwen_lsp.llm.history_tokens import HistoryTokens
from qwen_lsp.llm.tokens import TokenCounter


def msg(n: int) -> Any:
    return {"role": "user" if n % 2 == 0 else "model", "parts": [{"text": f"message number {n} " * (n % 7 + 1)}]}


def test_counts_follow_appends_and_replacements() -> None:
    counter = TokenCounter()
    calls: list[Any] = []

    def count_content(content: Any) -> int:
        calls.append(content)
        return counter.count_content(content)

    tally = HistoryTokens(count_content, capacity=2)
    history = [msg(n) for n in range(40)]

    def fresh() -> int:
        return sum(counter.count_content(c) for c in history)

    assert tally.count(history) == fresh()
    calls.clear()
    history.append(msg(40))
    assert tally.count(history) == fresh() and calls == [history[-1]]  # only the new message was counted
    history[:] = [msg(100), msg(101), *history[30:]]  # compaction replaces the history in place
    assert tally.count(history) == fresh()
    del history[5:]
    assert tally.count(history) == fresh()
    others = [[msg(n)] for n in range(3)]
    for other in others:  # more histories than the capacity: the oldest tally is dropped, counts stay right
        assert tally.count(other) == counter.count_content(other[0])
    assert tally.count(history) == fresh()
