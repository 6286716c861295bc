"""Text from the model or the repository made safe to show: to a person deciding, and to a terminal.

Two uses, two strengths:

* :func:`visible` — for what a person approves (the approval card, the CLI
  prompt). Every character that does not show as itself is written out:
  ``\\r``, ``\\x1b`` and the other controls as escapes, newlines as ``⏎``
  (or kept, one shown line per line), bidi controls, zero-width and other
  format characters as ``\\u202e``. ``git status`` followed by twelve
  newlines and ``touch X # <U+202E>…`` can no longer look like
  ``git status``, and ``\\r\\x1b[2K`` cannot redraw the prompt's line.
* :func:`terminal_safe` — for output printed to a terminal (``chat``,
  ``skills list``, ``memory list``): controls other than newline and tab,
  which could move the cursor, rewrite lines or set the clipboard (OSC 52),
  and bidi overrides are escaped; zero-width joiners are kept, emoji use them.

* :func:`prompt_name` — for a path or a name that goes into the prompt
  (the folder listing, the editor-context reminder, attachments, context
  file headers, restored files after compaction). A file name may hold a
  newline and ``</system-reminder>``: put raw into a reminder, the rest of
  the name stood on its own line, as if the reminder had said it. Here it
  stays one line with nothing hidden and no tag.

``visible`` and ``terminal_safe`` are idempotent: escaping escaped text changes nothing, so a layer that
escapes again (the server, then the editor) shows the same thing.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, TextIO

from .ignorable import is_ignorable

NEWLINE_MARK = "⏎"
_NAMED = {"\r": "\\r", "\t": "\\t", "\n": "\\n"}
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_TERMINAL_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


BRAILLE_BLANK = "\u2800"
"""Renders as a space but is none to a shell (the panel's ``src/shared/visibleText.ts`` writes it out too)."""


def _hidden(ch: str) -> bool:
    """Controls, format characters (bidi, zero-width, BOM, soft hyphen), line/paragraph separators, every
    ``Default_Ignorable_Code_Point`` (variation selectors, the Hangul fillers, U+034F…) and the braille blank:
    the same classes the panel writes out, so what the card shows and what the server sends agree."""
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") or ch == BRAILLE_BLANK or is_ignorable(ch)


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every character that does not show as itself written out (see the module doc)."""
    out = []
    for ch in text:
        if ch == "\n":
            out.append("\n" if keep_newlines else NEWLINE_MARK)
        elif _hidden(ch):
            out.append(_escape(ch))
        else:
            out.append(ch)
    return "".join(out)


def prompt_name(text: str) -> str:
    """A path or name as prompt text: every control (newline and tab too), line or paragraph separator and
    format character written as an escape (``\\n``, ``\\x1b``, ``\\u202e``), and ``<``/``>`` as ``&lt;``/``&gt;``,
    so it is one line, hides nothing, and can neither close a ``<system-reminder>`` nor open a tag.

    An ordinary name comes back unchanged (the usual case costs one scan). The one home for this:
    the listing, the editor context, attachments, context-file headers and post-compaction notices use it.
    """
    if text.isprintable() and "<" not in text and ">" not in text:
        return text
    out = []
    for ch in text:
        if ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif _hidden(ch):
            out.append(_escape(ch))
        else:
            out.append(ch)
    return "".join(out)


def line_count(text: str) -> int:
    """Lines as a shell sees them: a trailing newline does not start another."""
    return len(text.rstrip("\n").split("\n")) if text else 1


def shown_title(prefix: str, text: str, limit: int = 200) -> str:
    """``prefix`` + ``text`` on one visible line, at most ``limit`` characters.

    A multi-line text is flagged first (the flag is never cut), and a cut
    says how much is left out, so the end of a long command cannot hide.
    """
    lines = line_count(text)
    flag = f" [multi-line: {lines} lines]" if lines > 1 else ""
    body = visible(text)
    room = max(limit - len(prefix) - len(flag), 20)
    if len(body) > room:
        left = len(body) - (room - 20)
        body = body[: room - 20] + f"… [+{left} characters]"
    return f"{prefix}{body}{flag}"


def terminal_safe(text: str) -> str:
    """``text`` with cursor-moving, line-rewriting and clipboard-setting characters escaped; newlines and tabs kept.

    Written as ``\\u001b`` (``\\r`` for a carriage return), which is also a
    valid escape inside the JSON the ``--json`` options print.
    """
    return _TERMINAL_UNSAFE.sub(lambda m: "\\r" if m.group() == "\r" else f"\\u{ord(m.group()):04x}", text)


class EscapingStream:
    """A text stream that passes everything written through :func:`terminal_safe` (the CLI's stdout and stderr)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(terminal_safe(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
