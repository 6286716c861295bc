"""Token counts of chat histories that grow one message at a time, without recounting the rest.

The engine counts a chat's history before every request when the endpoint
reports no usage, and the inspector counts it on demand; a 500-message
history would otherwise be re-serialised and re-hashed message by message
each time. A :class:`HistoryTokens` remembers, per history list, the
Contents it counted (by identity) and the running sum, so counting after an
append only counts the new message, and after compaction only the Contents
that changed.

This relies on one rule the whole code base keeps: a Content in a history
is never mutated in place — compaction builds new Contents and swaps them
in. The per-Content memo of :class:`~qwen_lsp.llm.tokens.TokenCounter`
still catches equal Contents that are different objects.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .content import Content

DEFAULT_HISTORIES = 64


@dataclass
class _Tally:
    history: Sequence[Content]
    """Held so its ``id`` cannot be reused by another list while the entry lives."""
    contents: list[Content] = field(default_factory=list)
    sums: list[int] = field(default_factory=lambda: [0])


class HistoryTokens:
    def __init__(self, count_content: Callable[[Content], int], *, capacity: int = DEFAULT_HISTORIES) -> None:
        self._count_content = count_content
        self._capacity = capacity
        self._tallies: OrderedDict[int, _Tally] = OrderedDict()

    def count(self, history: Sequence[Content]) -> int:
        """Tokens of every Content in ``history`` (template overhead included, as ``count_content``)."""
        tally = self._tallies.get(id(history))
        if tally is None or tally.history is not history:
            tally = _Tally(history)
            self._tallies[id(history)] = tally
            if len(self._tallies) > self._capacity:
                self._tallies.popitem(last=False)
        else:
            self._tallies.move_to_end(id(history))
        same = 0
        limit = min(len(tally.contents), len(history))
        contents = tally.contents
        while same < limit and contents[same] is history[same]:
            same += 1
        del contents[same:]
        del tally.sums[same + 1 :]
        total = tally.sums[-1]
        for content in history[same:]:
            total += self._count_content(content)
            contents.append(content)
            tally.sums.append(total)
        return total
