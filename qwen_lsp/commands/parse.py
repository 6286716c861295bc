"""Is a typed line a command? Qwen Code 0.24.4's ``isSlashCommand`` and its name/argument split.

A line is a command when it starts with ``/``, but not ``//`` or ``/*`` (a comment), and its first
word holds no ``/`` or ``\\`` — so ``/usr/lib is missing`` or ``/tmp/x.log: what is this?`` are
messages for the model, while ``/compress`` and ``/nosuch`` are commands (the latter unknown).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SEPARATOR = re.compile(r"[/\\]")


@dataclass(frozen=True)
class Invoked:
    name: str
    """The first word after ``/``, lower-cased as 0.24.4 matches names."""
    args: str
    """The rest of the line, trimmed."""


def _first_token(line: str) -> str:
    rest = line[1:].lstrip()
    return rest.split(None, 1)[0] if rest.split() else ""


def is_slash_command(line: str) -> bool:
    """0.24.4's ``isSlashCommand`` (``packages/cli/src/ui/utils/commandUtils.ts``)."""
    if not line.startswith("/") or line.startswith("//") or line.startswith("/*"):
        return False
    return not _SEPARATOR.search(_first_token(line))


def split(line: str) -> Invoked:
    """The command's name and its arguments (the line must be a command: :func:`is_slash_command`)."""
    rest = line.strip()[1:].lstrip()
    parts = rest.split(None, 1)
    name = parts[0] if parts else ""
    return Invoked(name=name.lower(), args=parts[1].strip() if len(parts) > 1 else "")
