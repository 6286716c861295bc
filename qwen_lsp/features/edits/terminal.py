"""Asking on the terminal, for ``qwen-lsp chat``.

Interactive (stdin and stderr are terminals): the proposed change or
command is shown on stderr, every hidden character written out
(``text/visible.py``: ``\\r\\x1b[2K`` cannot redraw the line, each line of
a multi-line command is shown with ``>``), and the answer read from stdin — ``y`` allow,
``a`` allow always (this chat), anything else deny. Not interactive (piped,
CI): nobody can answer, so every question is answered "deny" with a note
on stderr; ``--approval-mode auto-edit`` or ``yolo`` are the ways to let
such a run edit.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from ...agent.approvals import Answer, Approval, Asker, PermissionRequest
from ...text.visible import visible

MAX_SHOWN_DIFF_LINES = 200
"""Past this many lines the prompt first says how long the change is (it is still shown whole)."""


def terminal_asker(stdin: TextIO | None = None, stderr: TextIO | None = None) -> Asker:
    src = stdin or sys.stdin
    out = stderr or sys.stderr

    async def ask(request: PermissionRequest) -> Approval:
        if not (src.isatty() and out.isatty()):
            print(f"[permission] denied (no terminal to ask): {request.shown_title()}", file=out, flush=True)
            return Approval("deny")
        print(f"\n[permission] Qwen wants to {request.shown_title()}", file=out)
        command = request.shown_command()
        if command:
            print("\n".join(f"  {'$' if i == 0 else '>'} {line}" for i, line in enumerate(command.split("\n"))), file=out)
        if request.diff:  # whole: an approval never shows less than it approves (a terminal scrolls)
            lines = [visible(line) for line in request.diff.splitlines()]
            if len(lines) > MAX_SHOWN_DIFF_LINES:
                print(f"(the whole change: {len(lines)} diff lines)", file=out)
            print("\n".join(lines), file=out)
        if request.always_covers:
            print(f"  [a]lways covers: {visible(request.always_covers)}", file=out)
        print("Allow? [y]es / [a]lways for this chat / [N]o: ", end="", file=out, flush=True)
        answer = (await asyncio.to_thread(src.readline)).strip().lower()
        return Approval(parse_answer(answer), by_user=True)

    return ask


def parse_answer(answer: str) -> Answer:
    if answer in ("y", "yes"):
        return "allow"
    if answer in ("a", "always"):
        return "allowAlways"
    return "deny"
