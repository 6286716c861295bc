"""A write is asked about with its whole diff: an approval never shows less than it approves.

Before: the diff for approval was cut at 200,000 characters, and the card counted the cut diff
without saying so; the last lines of a big write appeared nowhere in the approval UI. The editor
now opens the whole change (docs/security.md, "The VS Code extension").
"""

from __future__ import annotations

import difflib

from qwen_lsp.features.edits.tools import unified_diff


def _big(n: int) -> str:
    return "".join(f"line {i:05d} of the generated table, padded to be long enough\n" for i in range(1, n)) + f"LAST LINE {n}\n"


def test_a_new_file_over_the_old_cut_is_diffed_whole() -> None:
    after = _big(6000)
    assert len(after) > 200_000
    diff = unified_diff("big.txt", None, after)
    assert diff.endswith("+LAST LINE 6000\n")
    assert "diff cut" not in diff
    assert sum(1 for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")) == 6000


def test_a_big_change_to_an_existing_file_keeps_its_last_hunk() -> None:
    before = _big(8000)
    after = before.replace("line 00001 ", "line 00001 changed ").replace("LAST LINE 8000", "LAST LINE CHANGED")
    after = "".join(line.upper() if i % 2 else line for i, line in enumerate(after.splitlines(keepends=True)))
    diff = unified_diff("t.txt", before, after)
    assert len(diff) > 200_000
    assert "+LAST LINE CHANGED" in diff and "diff cut" not in diff
    expected = "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile="a/t.txt", tofile="b/t.txt"))
    assert diff == expected
