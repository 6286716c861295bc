"""The scripted side of a long session with compaction: shared by ``tests/reliability/test_soak.py`` and ``bench/soak.py``.

The context window is small (``SOAK_SETTINGS``), every answer is about 2 KB,
so auto-compaction fires every twenty-odd turns; compression requests (the
only ones asking for ``COMPACT_MAX_OUTPUT_TOKENS``) get a summary, every
other request an answer naming its turn.
"""

from __future__ import annotations

import json
import re
from typing import Any

from support.scripted_openai import Reply

from qwen_lsp.compaction.compress import COMPACT_MAX_OUTPUT_TOKENS

SOAK_SETTINGS: dict[str, Any] = {"model": {"contextWindow": 24_000}}
"""Auto-compaction at 20,400 tokens (Qwen Code 0.24.4's ``min(0.85·w, w − 33000)``, floored for a small window)."""
SUMMARY = "<analysis>long run</analysis><state_snapshot><current_work>soak turn summary</current_work></state_snapshot>"
ANSWER_PIECES = 16


def prompt(turn: int) -> str:
    return f"soak turn {turn}: keep going with the next step of the plan"


def soak_reply(body: dict[str, Any]) -> Reply:
    if body.get("max_tokens") == COMPACT_MAX_OUTPUT_TOKENS:
        return Reply(chunks=[SUMMARY])
    found = re.search(r"soak turn (\d+)", json.dumps(body.get("messages", [])[-1:]))
    turn = found[1] if found else "?"
    return Reply(chunks=[f"answer {turn} part {i}: " + "lorem ipsum dolor sit amet " * 4 + "\n" for i in range(ANSWER_PIECES)])
