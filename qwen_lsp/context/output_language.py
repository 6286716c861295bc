"""``output-language.md``: the reply-language rule Qwen Code keeps beside the context files.

Qwen Code 0.24 writes ``~/.qwen/output-language.md`` at start-up when the
file carries no language marker, and then loads it as one more context
file, after every QWEN.md/AGENTS.md and before ``QWEN.local.md``. A
project copy at ``<cwd>/.qwen/output-language.md`` wins over the global one.
We do the same so that a user who switches between the CLI and the editor
gets the same prompt, and so that our context blocks match the CLI's on the
same HOME. The file text is data shared with the CLI, so it must be the
same bytes the CLI writes.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from ..files.reading import atomic_write_text
from .text import read_text

log = logging.getLogger(__name__)

FILENAME = "output-language.md"
AUTO = "auto"
_MARKER_PREFIX = "qwen-code:llm-output-language:"
_MARKER = re.compile(r"<!--\s*" + re.escape(_MARKER_PREFIX) + r"\s*(.*?)\s*-->", re.IGNORECASE)
_LEGACY_HEADING = re.compile(r"^#.*?CRITICAL:\s*(.*?)\s+Output Language Rule\b", re.IGNORECASE | re.MULTILINE)

_TECHNICAL = """## Keep technical artifacts unchanged
Do **not** translate or rewrite:
- Code blocks, CLI commands, file paths, stack traces, logs, JSON keys, identifiers
- Exact quoted text from the user (keep quotes verbatim)
"""


def file_content(language: str) -> str:
    """The bytes Qwen Code writes for ``language`` (``auto`` follows the user's language)."""
    safe = re.sub(r"--", "", re.sub(r"--!?>", "", re.sub(r"[\r\n]", " ", language)))
    if not language or language.lower() == AUTO:
        return f"""# Output language preference: {AUTO}
<!-- {_MARKER_PREFIX} {AUTO} -->

## Rule
Respond in the same language as the user's input.

## Exception
If the user **explicitly** requests a response in a specific language (e.g., "please reply in English"), switch to the user's requested language for the remainder of the conversation.

## Mixed-language input
If the user mixes languages, use the language that best matches the user's main request.

{_TECHNICAL}
## Tool / system outputs
Raw tool/system outputs may contain fixed-format English. Preserve them verbatim, and if needed, add a short explanation in the user's language below.
"""
    return f"""# Output language preference: {language}
<!-- {_MARKER_PREFIX} {safe} -->

## Rule
You MUST always respond in **{language}** regardless of the user's input language.
This is a mandatory requirement, not a preference.

## Exception
If the user **explicitly** requests a response in a specific language (e.g., "please reply in English", "\u7528\u4e2d\u6587\u56de\u7b54"), switch to the user's requested language for the remainder of the conversation.

{_TECHNICAL}
## Tool / system outputs
Raw tool/system outputs may contain fixed-format English. Preserve them verbatim, and if needed, add a short **{language}** explanation below.
"""


def declared_language(text: str) -> str | None:
    for pattern in (_MARKER, _LEGACY_HEADING):
        match = pattern.search(text)
        if match and match.group(1).strip():
            return match.group(1).strip()
    return None


def ensure_global_file(global_dir: str, language: str) -> None:
    """Create ``<global>/output-language.md`` when it names no language, as the CLI does at start-up.

    An existing file with a marker is the user's (or the CLI's) choice and
    is left alone. Failure to write only costs the block, so it is logged.
    """
    path = os.path.join(global_dir, FILENAME)
    try:
        if declared_language(read_text(path)) is not None:
            return
    except OSError:
        pass
    try:
        atomic_write_text(Path(path), file_content(language), mode=0o644)
    except OSError as exc:
        log.warning("cannot write %s: %s", path, exc)


def resolve_path(cwd: str, global_dir: str) -> str | None:
    """The file the CLI would load: the project one if present, else the global one if present."""
    for candidate in (os.path.join(cwd, ".qwen", FILENAME), os.path.join(global_dir, FILENAME)):
        if os.access(candidate, os.F_OK):  # os.path.exists without a stat result to build
            return candidate
    return None
