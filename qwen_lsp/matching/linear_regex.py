"""RE2, the one regex engine for patterns a repository or the model controls.

Python's ``re`` backtracks: ``(a+)+$`` over 40 ``a``s never returns, and it
holds the GIL while it runs, so one such pattern froze the whole server.
RE2 (google-re2) matches in time linear in the text for every pattern it
accepts; what it gives up to promise that — backreferences and lookarounds
— is refused with a message saying so, never quietly handed to ``re``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import re2

_UNSUPPORTED_HINT = (
    " (lookarounds such as (?=…) and (?<!…) and backreferences such as \\1 are not supported: "
    "this search uses a linear-time engine so that no pattern can hang it)"
)


class LinearRegexError(ValueError):
    """A pattern RE2 refuses; the message is meant for whoever wrote the pattern."""


def compile_linear(source: str, *, ignore_case: bool = False) -> re2._Regexp:
    """``source`` compiled by RE2 (no capture groups: callers only ask where a match is)."""
    import re2  # imported where first used: a one-shot `qwen-lsp chat` compiles no pattern before its request

    options = re2.Options()
    options.log_errors = False  # the error becomes our message; RE2's own log line would be stderr noise
    options.never_capture = True
    options.case_sensitive = not ignore_case
    try:
        return re2.compile(source, options)
    except re2.error as exc:
        raise LinearRegexError(_describe(exc)) from None


def _describe(exc: Exception) -> str:
    arg = exc.args[0] if exc.args else exc
    text = arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)
    if "invalid perl operator" in text or "invalid escape sequence" in text:
        text += _UNSUPPORTED_HINT
    return text
