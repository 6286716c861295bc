"""Which models take images, as Qwen Code 0.24.4's ``defaultModalities`` (``MODALITY_PATTERNS``) decides.

The first pattern matching the normalised id (``model_ids.normalize``) decides; an id no pattern
matches takes text only. Only the image column matters here: an attached image is sent as an
image part to a model that takes images and refused, with a message saying why, otherwise
(0.24.4 can route it through a separate vision model; qwen-lsp has none).
"""

from __future__ import annotations

import re

from .model_ids import normalize

_PATTERNS: tuple[tuple[str, bool], ...] = (
    (r"^gemini-", True),
    (r"^gpt-", True),
    (r"^o\d", True),
    (r"^claude-", True),
    (r"^qwen\d*\.?\d*-omni", True),
    (r"^qwen-omni", True),
    (r"^qwen3\.[5-7]-plus", True),
    (r"^qwen3\.8-(?:flash|plus|max)", True),
    (r"^coder-model$", True),
    (r"^qwen-vl-", True),
    (r"^qwen3-vl-", True),
    (r"^qwen3-coder-", False),
    (r"^qwen3\.6-35b", True),
    (r"^qwen", False),
    (r"^deepseek-.*vision", True),
    (r"^deepseek", False),
    (r"^glm-[0-9.]+v", True),
    (r"^glm-5\.3-flash", True),
    (r"^glm-", False),
    (r"^minimax-m3", True),
)
_COMPILED = tuple((re.compile(p), image) for p, image in _PATTERNS)


def accepts_images(model: str | None) -> bool:
    norm = normalize(model or "")
    for pattern, image in _COMPILED:
        if pattern.search(norm):
            return image
    return False
