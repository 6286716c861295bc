"""The user settings of a scratch HOME with every background model request off.

Background work — memory extraction after every turn, dream, the follow-up
suggestion's side query (and its speculation), skill review after 20 tool
calls — each takes a scripted reply and makes request counts depend on
timing. The suite's ``home`` fixture, the raw LSP peer and the benchmarks
that start the server write this file; tests of those features turn them
back on in their own settings layer, which lies over this user file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NO_BACKGROUND: dict[str, Any] = {
    "memory": {"autoExtract": False, "autoDream": False},
    "followup": {"enabled": False},
    "skills": {"review": {"enabled": False}},
}


def write_quiet_settings(home: Path, extra: dict[str, Any] | None = None) -> Path:
    """``home/.qwen/settings.json`` = NO_BACKGROUND with ``extra``'s top-level sections laid over it."""
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({**NO_BACKGROUND, **(extra or {})}) + "\n")
    return settings
