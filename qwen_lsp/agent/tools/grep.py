"""``grep_search``: lines matching a regular expression, grouped by file.

Qwen Code 0.24's name and parameters (``pattern``, ``path``, ``glob``,
``limit``) and output shape (``File: <path>`` blocks of ``L<n>: <line>``,
``---`` separators, a ``Found N matches …`` header), case-insensitive like its
built-in search. Caps: at most ``limit`` (default and maximum 1000)
matching lines and 25 000 characters are shown, though every match is
counted; files over 2 MiB and binary files are skipped, as are ignored
paths (see ``ignore.py``). A ``glob`` without ``/`` matches file names at
any depth (``*.py``), one with ``/`` matches the path relative to the
search directory (``src/**/*.ts``).

The pattern is the model's, so nothing it writes may hang the server:
it is compiled by RE2 (:mod:`qwen_lsp.matching.linear_regex`), linear in the text
for every pattern; lookarounds and backreferences, which only a
backtracking engine offers, are refused with a message saying so (the
everyday JS-style syntax reads the same). The walk runs in a worker thread
that stops as soon as the turn is cancelled, and stops by itself after
:data:`MAX_FILES_SCANNED` files or :data:`MAX_BYTES_SCANNED` bytes, saying
so. Symlinked files leading out of the workspace are skipped by the walk.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, field_validator
from ..tool import ToolContext, ToolResult
from .base import (
    FileTool,
    Outcome,
    ToolArgs,
    ToolInputError,
    function_declaration,
)
from .ignore import IgnoreRules, walk_files
from ...files.text import cap_line, looks_binary, open_text, read_head
from .workspace import search_root
from ...matching.linear_regex import LinearRegexError, compile_linear
from ...matching.safe_glob import InvalidGlob, compile_pattern

MAX_LINES = 1000
MAX_OUTPUT_CHARS = 25_000
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_FILES_SCANNED = 50_000
"""Files one search reads before it stops and says so (a huge tree, or a hostile one, must not pin a worker)."""
MAX_BYTES_SCANNED = 256 * 1024 * 1024
"""Bytes one search reads before it stops and says so."""


class GrepArgs(ToolArgs):
    pattern: str = Field(min_length=1)
    path: str | None = None
    glob: str | None = None
    limit: int | None = Field(default=None, ge=1)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            compile_linear(value)
        except LinearRegexError as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return value

    @field_validator("glob")
    @classmethod
    def _glob_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                compile_pattern(value, extglob=False, basename=True)
            except InvalidGlob as exc:
                raise ValueError(f"invalid glob: {exc}") from None
        return value


@dataclass(frozen=True)
class _Match:
    file: Path
    line_no: int
    line: str


class GrepTool(FileTool[GrepArgs]):
    name = "grep_search"
    args_model = GrepArgs
    DECLARATION = function_declaration(
        "grep_search",
        "Searches file contents in the workspace with a regular expression.\n\n"
        "  Usage:\n"
        "  - Use this tool for content searches rather than running grep or rg in a shell.\n"
        '  - Full regex syntax, e.g. "log.*Error" or "def\\s+\\w+"\n'
        '  - Narrow the files with the glob parameter, e.g. "*.py" or "src/**/*.{ts,tsx}"\n'
        "  - Matching ignores case\n"
        "  - Answers with matching lines grouped by file, with line numbers\n",
        {
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search file contents for."},
                "glob": {
                    "type": "string",
                    "description": 'Glob pattern that files must match to be searched, e.g. "*.py", "*.{ts,tsx}".',
                },
                "path": {
                    "type": "string",
                    "description": "File or directory to search. Defaults to the current working directory.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Show at most this many matching lines. Optional; without it, all matches up to "
                    "a built-in maximum are shown.",
                },
            },
            "required": ["pattern"],
            "type": "object",
        },
    )

    def execute_cancellable(self, params: GrepArgs, ctx: ToolContext, cancelled: threading.Event) -> Outcome:
        target = search_root(params.path, ctx)
        if not target.exists():
            raise ToolInputError(f"Path not found: {target}")
        search = _Search(params.pattern)
        in_glob = compile_pattern(params.glob, extglob=False, basename=True) if params.glob else None
        line_limit = min(MAX_LINES, params.limit or MAX_LINES)

        base = target if target.is_dir() else target.parent
        if target.is_dir():
            files = walk_files(target, IgnoreRules.for_workspace(ctx.workspace_root))
        else:
            files = iter([target])
        kept: list[_Match] = []
        total = 0
        budget = _Budget()
        for path in files:
            if cancelled.is_set() or budget.spent:
                break
            if in_glob is not None and not in_glob(path.relative_to(base).as_posix()):
                continue
            for match in search.file(path, budget):
                total += 1
                if len(kept) < line_limit:
                    kept.append(match)

        where = f'in path "{params.path}"' if params.path else "in the workspace directory"
        filter_note = f' (filter: "{params.glob}")' if params.glob else ""
        touched = [target] if params.path else []
        stopped = budget.note()
        if total == 0:
            return Outcome(
                ToolResult(
                    output=f'No matches found for pattern "{params.pattern}" {where}{filter_note}.{stopped}',
                    display="No matches found",
                ),
                touched=touched,
            )
        body, shown = _render(kept, base)
        term = "match" if total == 1 else "matches"
        output = f'Found {total} {term} for pattern "{params.pattern}" {where}{filter_note}:\n---\n{body}'
        omitted = total - len(shown)
        if omitted:
            output += f" [{omitted} {'line' if omitted == 1 else 'lines'} truncated] ..."
        output += stopped
        files_shown = list(dict.fromkeys(m.file for m in shown))
        return Outcome(
            ToolResult(
                output=output,
                display=f"Found {total} {term}" + (" (truncated)" if omitted else ""),
                extra={"matches": total, "files": [str(f) for f in files_shown]},
            ),
            touched=touched + files_shown,
        )


@dataclass
class _Budget:
    """What one search has read so far, against :data:`MAX_FILES_SCANNED` and :data:`MAX_BYTES_SCANNED`."""

    files: int = 0
    size: int = 0

    @property
    def spent(self) -> bool:
        return self.files >= MAX_FILES_SCANNED or self.size >= MAX_BYTES_SCANNED

    def note(self) -> str:
        if not self.spent:
            return ""
        return (
            f"\n[Search stopped after reading {self.files} files ({self.size // (1024 * 1024)} MiB); "
            "narrow the path or glob to search the rest.]"
        )


class _Search:
    """The model's pattern, compiled by RE2 twice: over a whole file, and per line.

    The whole-file pass (``(?m)``: ``^``/``$`` at line breaks) finds where a
    match starts; only that line is then checked on its own, so the answer is
    exactly "lines the pattern matches" while a file costs one linear pass
    plus a little per hit. The text is searched as UTF-8 bytes: RE2 reads
    them natively, and offsets into bytes need no conversion.
    """

    def __init__(self, pattern: str) -> None:
        self.line = compile_linear(pattern, ignore_case=True)
        self.whole = compile_linear("(?m)" + pattern, ignore_case=True)

    def file(self, path: Path, budget: _Budget) -> list[_Match]:
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                return []
            head = read_head(path)
            if looks_binary(head):
                return []
            budget.files += 1
            budget.size += size
            with open_text(path, head) as fh:
                text = fh.read(MAX_FILE_BYTES + 1)
        except OSError:
            return []
        return list(self._lines(path, _lf_only(text).encode("utf-8")))

    def _lines(self, path: Path, data: bytes) -> Iterator[_Match]:
        pos = 0
        line_no = 1
        counted_to = 0
        while pos <= len(data):
            hit = self.whole.search(data, pos)
            if hit is None:
                return
            start = data.rfind(b"\n", 0, hit.start()) + 1
            if start >= len(data):  # an empty match after the final newline: no such line
                return
            end = data.find(b"\n", hit.start())
            end = len(data) if end < 0 else end
            line_no += data.count(b"\n", counted_to, start)
            counted_to = start
            line = data[start:end]
            if self.line.search(line) is not None:  # a match that ran across lines is no line match
                yield _Match(path, line_no, line.decode("utf-8"))
            pos = end + 1


def _lf_only(text: str) -> str:
    """Every line break (``\\r\\n``, ``\\r``, ``\\n``, as Qwen Code splits lines) as ``\\n``, the only one RE2's ``(?m)`` knows."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _render(matches: list[_Match], base: Path) -> tuple[str, list[_Match]]:
    """Qwen Code's grouped layout, stopping at the character budget (the cut line ends in ``...``)."""
    out: list[str] = []
    used = 0
    shown: list[_Match] = []
    by_file: dict[Path, list[_Match]] = {}
    for m in matches:
        by_file.setdefault(m.file, []).append(m)

    def add(chunk: str, match: _Match | None = None) -> bool:
        nonlocal used
        if used + len(chunk) > MAX_OUTPUT_CHARS:
            out.append(chunk[: max(MAX_OUTPUT_CHARS - used, 0)] + "...")
            if match is not None:
                shown.append(match)
            return False
        out.append(chunk)
        used += len(chunk)
        if match is not None:
            shown.append(match)
        return True

    for file, file_matches in by_file.items():
        if not add(f"File: {file.relative_to(base).as_posix()}\n"):
            break
        if not all(add(f"L{m.line_no}: {cap_line(m.line.strip())}\n", m) for m in file_matches):
            break
        if not add("---\n"):
            break
    return "".join(out), shown
