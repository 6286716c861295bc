"""``grep_search``: lines matching a regular expression, grouped by file.

Qwen Code 0.24's name and parameters (``pattern``, ``path``, ``glob``,
``limit``) and output shape (``File: <path>`` blocks of ``L<n>: <line>``,
``---`` separators, a ``Found N matches …`` header), case-insensitive like its
built-in search. Pure Python ``re`` (patterns are JS-style regexes, which
``re`` reads the same for everyday use). Caps: at most ``limit`` (default
and maximum 1000) matching lines and 25 000 characters are shown, though
every match is counted; files over 2 MiB and binary files are skipped, as
are ignored paths (see ``ignore.py``). A ``glob`` without ``/`` matches file
names at any depth (``*.py``), one with ``/`` matches the path relative to
the search directory (``src/**/*.ts``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, field_validator
from wcmatch import glob as wc

from qwen_lsp.agent.tool import ToolContext, ToolResult
from qwen_lsp.agent.tools.base import (
    FileTool,
    Outcome,
    ToolArgs,
    ToolInputError,
    function_declaration,
)
from qwen_lsp.agent.tools.ignore import IgnoreRules, walk_files
from qwen_lsp.agent.tools.textfiles import cap_line, looks_binary, open_text, read_head
from qwen_lsp.agent.tools.workspace import search_root

MAX_LINES = 1000
MAX_OUTPUT_CHARS = 25_000
MAX_FILE_BYTES = 2 * 1024 * 1024
_GLOB_FLAGS = wc.GLOBSTAR | wc.DOTGLOB | wc.BRACE | wc.MATCHBASE


class GrepArgs(ToolArgs):
    pattern: str = Field(min_length=1)
    path: str | None = None
    glob: str | None = None
    limit: int | None = Field(default=None, ge=1)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from exc
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

    def execute(self, params: GrepArgs, ctx: ToolContext) -> Outcome:
        target = search_root(params.path, ctx)
        if not target.exists():
            raise ToolInputError(f"Path not found: {target}")
        regex = re.compile(params.pattern, re.IGNORECASE)
        line_limit = min(MAX_LINES, params.limit or MAX_LINES)

        base = target if target.is_dir() else target.parent
        if target.is_dir():
            files = walk_files(target, IgnoreRules.for_workspace(ctx.workspace_root))
        else:
            files = iter([target])
        kept: list[_Match] = []
        total = 0
        for path in files:
            if params.glob and not wc.globmatch(path.relative_to(base).as_posix(), params.glob, flags=_GLOB_FLAGS):
                continue
            for match in _search_file(path, regex):
                total += 1
                if len(kept) < line_limit:
                    kept.append(match)

        where = f'in path "{params.path}"' if params.path else "in the workspace directory"
        filter_note = f' (filter: "{params.glob}")' if params.glob else ""
        touched = [target] if params.path else []
        if total == 0:
            return Outcome(
                ToolResult(
                    output=f'No matches found for pattern "{params.pattern}" {where}{filter_note}.',
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
        files_shown = list(dict.fromkeys(m.file for m in shown))
        return Outcome(
            ToolResult(
                output=output,
                display=f"Found {total} {term}" + (" (truncated)" if omitted else ""),
                extra={"matches": total, "files": [str(f) for f in files_shown]},
            ),
            touched=touched + files_shown,
        )


def _search_file(path: Path, regex: re.Pattern[str]) -> list[_Match]:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return []
        head = read_head(path)
        if looks_binary(head):
            return []
        with open_text(path, head) as fh:
            return [
                _Match(path, n, line.rstrip("\r\n"))
                for n, line in enumerate(fh, start=1)
                if regex.search(line.rstrip("\r\n"))
            ]
    except OSError:
        return []


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
