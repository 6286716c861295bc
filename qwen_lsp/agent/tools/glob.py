"""``glob``: files whose path matches a glob pattern, recently changed ones first.

Qwen Code 0.24's name and parameters (``pattern``, ``path``). Matching as
there: relative to the search directory, ``**`` crossing directories, dot
files included, case-insensitive, symlinked directories not followed, and
ignored paths (see ``ignore.py``) skipped. A pattern that names an existing
file literally matches just that file. Order as there: files modified in the
last 24 hours newest first, then the rest alphabetically by path; at most
100 paths are shown, and the walk stops collecting at 1000 matches.

The pattern is the model's, so it is compiled by :mod:`qwen_lsp.matching.safe_glob`
(linear-time RE2 matching: ``**/+(?|?)Z`` once froze the server for 90 s),
the walk runs in a worker thread that stops when the turn is cancelled,
and symlinked files leading out of the workspace are skipped by the walk.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from pydantic import field_validator

from ..tool import ToolContext, ToolResult
from .base import (
    FileTool,
    Outcome,
    ToolArgs,
    ToolInputError,
    function_declaration,
)
from .ignore import IgnoreRules, walk_files
from .workspace import search_root
from ...matching.safe_glob import InvalidGlob, compile_pattern

MAX_SHOWN = 100
MAX_COLLECTED = 1000
RECENT_SECONDS = 24 * 60 * 60


class GlobArgs(ToolArgs):
    pattern: str
    path: str | None = None

    @field_validator("pattern")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("The 'pattern' parameter cannot be empty.")
        return value


def order_newest_first(found: list[tuple[Path, float]], now: float) -> list[Path]:
    """Qwen Code's order: recent files (under 24 h) newest first, then older ones by path."""
    recent = sorted((p for p in found if now - p[1] < RECENT_SECONDS), key=lambda p: (-p[1], str(p[0])))
    older = sorted((p for p in found if now - p[1] >= RECENT_SECONDS), key=lambda p: str(p[0]))
    return [p for p, _ in recent + older]


class GlobTool(FileTool[GlobArgs]):
    name = "glob"
    args_model = GlobArgs
    DECLARATION = function_declaration(
        "glob",
        "Finds files by path pattern, in a project of any size.\n"
        '- Patterns like "**/*.py" or "src/**/*.{ts,tsx}"; matching ignores case\n'
        "- Answers with absolute paths, recently modified files first\n"
        "- Use it to locate files by name; use grep_search to search inside files\n"
        "- Several independent searches can be requested in one response.",
        {
            "properties": {
                "pattern": {"description": "The glob pattern to match file paths against.", "type": "string"},
                "path": {
                    "description": "Directory to search in. Leave it out to search the current working directory "
                    "(do not pass 'undefined' or 'null').",
                    "type": "string",
                },
            },
            "required": ["pattern"],
            "type": "object",
        },
    )

    def execute_cancellable(self, params: GlobArgs, ctx: ToolContext, cancelled: threading.Event) -> Outcome:
        from wcmatch import glob as wc  # imported when the tool first runs, not when it is declared

        base = search_root(params.path, ctx)
        if not base.is_dir():
            raise ToolInputError(f"Search path is not a directory: {base}")
        pattern = _relative_pattern(params.pattern.strip(), base)
        if (base / pattern).is_file():
            pattern = wc.escape(pattern)
        try:
            matches = compile_pattern(pattern, ignore_case=True)
        except InvalidGlob as exc:
            raise ToolInputError(f"Invalid glob pattern {params.pattern!r}: {exc}") from None

        rules = IgnoreRules.for_workspace(ctx.workspace_root)
        found: list[tuple[Path, float]] = []
        hit_cap = False
        for path in walk_files(base, rules):
            if cancelled.is_set():
                break
            if not matches(path.relative_to(base).as_posix()):
                continue
            if len(found) >= MAX_COLLECTED:
                hit_cap = True
                break
            try:
                found.append((path, path.stat().st_mtime))
            except OSError:
                continue

        where = f"within {base}" if params.path else "in the workspace directory"
        if not found:
            return Outcome(
                ToolResult(output=f'No files found matching pattern "{params.pattern}" {where}', display="No files found"),
                touched=[base] if params.path else [],
            )
        ordered = order_newest_first(found, time.time())
        shown = ordered[:MAX_SHOWN]
        count = f"at least {len(ordered)}" if hit_cap else str(len(ordered))
        output = (
            f'Found {count} file(s) matching "{params.pattern}" {where}, sorted by modification time (newest first):'
            "\n---\n" + "\n".join(str(p) for p in shown)
        )
        if hit_cap:
            output += f"\n---\n[Results truncated after {len(ordered)} matching files. Narrow the pattern or path.]"
        elif len(shown) < len(ordered):
            omitted = len(ordered) - len(shown)
            output += f"\n---\n[{omitted} {'file' if omitted == 1 else 'files'} truncated] ..."
        return Outcome(
            ToolResult(
                output=output,
                display=f"Found {count} matching file(s)" + (" (truncated)" if len(shown) < len(ordered) or hit_cap else ""),
                extra={"paths": [str(p) for p in shown]},
            ),
            touched=([base] if params.path else []) + shown,
        )


def _relative_pattern(pattern: str, base: Path) -> str:
    """Absolute patterns are accepted when they point under the search directory."""
    if not pattern.startswith("/"):
        return pattern
    prefix = base.as_posix().rstrip("/") + "/"
    if pattern.startswith(prefix):
        return pattern[len(prefix) :]
    raise ToolInputError(f"Pattern {pattern} is not under the search directory {base}. Use a relative pattern.")
