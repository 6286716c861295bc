"""``qwen-lsp doctor``'s line about the context window: compaction's numbers for the settings in effect.

Here, not in ``settings/doctor.py``: settings sit below compaction in the layers (docs/architecture.md),
and this line is compaction's reading of them.
"""

from __future__ import annotations

from ..settings.config import LoadedSettings
from .compactor import thresholds_for
from .windows import known_window


def window_line(loaded: LoadedSettings) -> str:
    """The context window and thresholds in effect and where the window came from (``compaction/windows.py``)."""
    s = loaded.settings
    th = thresholds_for(s)
    if s.model.context_window is not None:
        key = "model.generationConfig.contextWindowSize" if "model.generationConfig.contextWindowSize" in loaded.sources else "model.contextWindow"
        origin = loaded.origin(key)
    elif known_window(s.model.name) is not None:
        origin = f"Qwen Code 0.24.4's table for {s.model.name}"
    else:
        origin = "Qwen Code 0.24.4's default for a model it does not know"
    return f"context window: {th.window} ({origin}); compresses at {th.auto:.0f}, warns at {th.warn:.0f}, hard limit {th.hard:.0f}"
