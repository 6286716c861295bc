"""The feature list: the features every folder is built with, in the order every turn runs them.

Adding a feature is one package under ``qwen_lsp/features/`` exporting a
``FEATURE`` (:class:`~qwen_lsp.agent.services.FeatureModule`) and one line
here; nothing else names it (docs/architecture.md, "Adding a feature").

Order matters: compaction shrinks the history before the others see a
request, and the tools array (memory's, then the edits') heads the
prompt-cache prefix, so a new feature goes last unless it must not.
"""

from __future__ import annotations

from ..agent.services import FeatureModule
from . import compaction, editor_context, edits, followups, memory, skill_review

FEATURES: tuple[FeatureModule, ...] = (
    memory.FEATURE,
    compaction.FEATURE,
    skill_review.FEATURE,
    followups.FEATURE,
    edits.FEATURE,
    editor_context.FEATURE,
)
