"""A model's JSON answer, as side queries get it: often wrapped in one Markdown code fence."""

from __future__ import annotations

import json
from typing import Any


def parse_json_answer(answer: str, *, max_chars: int | None = None) -> Any:
    """The JSON value in ``answer``, one surrounding code fence tolerated.

    Raises ``ValueError`` (``json.JSONDecodeError`` for bad JSON) when it is
    not JSON or longer than ``max_chars``.
    """
    if max_chars is not None and len(answer) > max_chars:
        raise ValueError(f"answer too long ({len(answer)} characters)")
    text = answer.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return json.loads(text)
