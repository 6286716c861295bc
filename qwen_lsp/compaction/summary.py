"""What becomes of the compression model's answer: the ``<analysis>`` draft stripped, the resume trailer added.

``strip_analysis_block`` is Qwen Code's two-pass strip (``chatCompressionService.ts``), written
as plain scans instead of regexes so its cost stays linear on any model
output: pass 1 removes every closed ``<analysis>…</analysis>`` block (lazy,
left to right, with the whitespace after it), pass 2 removes an unclosed
``<analysis>`` and everything after it (the model ran out of tokens while
drafting), then the result is trimmed. Tags are matched exactly and
case-sensitively, as Qwen Code does.

The trailer is added here rather than asked of the model: asking would make
every compression pay output tokens for the same sentence, and its wording
would drift.
"""

from __future__ import annotations

from ..text.jstext import JS_WHITESPACE, js_trim

OPEN = "<analysis>"
CLOSE = "</analysis>"

RESUME_TRAILER = (
    "Resume the prior task using the summary above. Continue from the last in-flight step; "
    "do not acknowledge the summary, do not re-introduce, do not greet the user again."
)
SUMMARY_ACK = "Got it. Thanks for the additional context!"
SUMMARY_UNAVAILABLE = "[Summary unavailable]"
SNAPSHOT_REQUEST = "First, reason in your <analysis> block. Then, produce the <state_snapshot> XML."
"""The user message that ends the compression request (as Qwen Code's ``chatCompressionService.ts``)."""


def _strip_closed(text: str) -> str:
    out: list[str] = []
    i = 0
    while True:
        start = text.find(OPEN, i)
        end = text.find(CLOSE, start + len(OPEN)) if start >= 0 else -1
        if end < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:start])
        i = end + len(CLOSE)
        while i < len(text) and text[i] in JS_WHITESPACE:
            i += 1


def strip_analysis_block(raw: str) -> str:
    """The summary without its drafting blocks (both passes), trimmed."""
    text = _strip_closed(raw)
    start = text.find(OPEN)
    if start >= 0:
        text = text[:start]
    return js_trim(text)


def post_process_summary(raw: str) -> str:
    """The first message of a compacted history: the stripped summary, then the resume trailer."""
    return f"{strip_analysis_block(raw) or SUMMARY_UNAVAILABLE}\n\n{RESUME_TRAILER}"
