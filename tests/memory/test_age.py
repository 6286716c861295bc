"""Ages in words and the freshness note (Qwen Code's ``memoryAge.ts``)."""

from __future__ import annotations

from qwen_lsp.memory.age import memory_age, memory_age_days, memory_freshness_text

NOW = 1_780_000_000.0
DAY = 86_400


def test_age_words() -> None:
    assert memory_age(NOW, NOW) == "today"
    assert memory_age(NOW - DAY + 1, NOW) == "today"
    assert memory_age(NOW - DAY, NOW) == "yesterday"
    assert memory_age(NOW - 2 * DAY + 1, NOW) == "yesterday"
    assert memory_age(NOW - 2 * DAY, NOW) == "2 days ago"
    assert memory_age(NOW - 47 * DAY - 3600, NOW) == "47 days ago"


def test_a_future_mtime_reads_as_today() -> None:
    assert memory_age_days(NOW + 5 * DAY, NOW) == 0
    assert memory_age(NOW + 5 * DAY, NOW) == "today"
    assert memory_age(float("nan"), NOW) == "today"


def test_freshness_note_only_past_one_day() -> None:
    assert memory_freshness_text(NOW, NOW) == ""
    assert memory_freshness_text(NOW - DAY, NOW) == ""
    assert memory_freshness_text(NOW - 47 * DAY, NOW) == (
        "This memory is 47 days old. Memories are point-in-time observations, not live state — claims about"
        " code behavior or file:line citations may be outdated. Verify against current code before asserting as fact."
    )
