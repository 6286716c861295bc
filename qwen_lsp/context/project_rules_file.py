"""Add to QWEN.md: append text under ``## Qwen Added Memories`` in the project context file.

Qwen Code 0.24 appends workspace memories this way (``writeWorkspaceContextFile``
in append mode), and the editor command ``qwen.addToProjectRules`` does the
same so the CLI and the editor keep one file in one shape:

* a missing or empty file becomes ``## Qwen Added Memories\\n<text>\\n``;
* a file without the section gets it at the end, after a blank line;
* otherwise the text goes at the end of the section: just before the next
  ``## `` heading that is not inside a code fence, or at the end of file.

The text has leading/trailing newlines removed; blank text changes nothing.
The assembler writes the result with the package's atomic writer
(``files/reading.py``), so a crash never leaves a half-written QWEN.md.
"""

from __future__ import annotations

MEMORY_SECTION_HEADER = "## Qwen Added Memories"


def _next_section(text: str, start: int) -> int:
    """Offset (relative to ``start``) of the newline before the next top-level ``## `` heading, or -1."""
    in_fence = False
    line_start = start
    for i in range(start, len(text)):
        if text[i] != "\n":
            continue
        if text.startswith("```", line_start) or text.startswith("~~~", line_start):
            in_fence = not in_fence
        if not in_fence and text.startswith("## ", i + 1):
            return i - start
        line_start = i + 1
    return -1


def append_to_project_rules(existing: str, text: str) -> str:
    """The new file content after adding ``text`` to the memories section of ``existing``."""
    entry = text.strip("\n")
    if not entry:
        return existing
    if not existing:
        return f"{MEMORY_SECTION_HEADER}\n{entry}\n"
    at = existing.find(MEMORY_SECTION_HEADER)
    if at == -1:
        sep = "" if existing.endswith("\n") else "\n"
        return f"{existing}{sep}\n{MEMORY_SECTION_HEADER}\n{entry}\n"
    after_header = at + len(MEMORY_SECTION_HEADER)
    rel = _next_section(existing, after_header)
    if rel == -1:
        sep = "" if existing.endswith("\n") else "\n"
        return f"{existing}{sep}{entry}\n"
    insert = after_header + rel
    before, after = existing[:insert], existing[insert:]
    sep = "" if before.endswith("\n") else "\n"
    return f"{before}{sep}{entry}\n{after}"
