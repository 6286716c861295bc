"""Editor context: which files the user has open, which one is focused, where the cursor is, what is selected.

The model is told, as Qwen Code 0.24.4 tells it in IDE mode (``IdeContextStore`` in
``ide/ideContext.ts`` and ``getIdeContextParts`` in ``core/client.ts``): a
``<system-reminder>`` riding with the user's message, whole on a chat's first turn
(and after a compression, a resume or a failed request), afterwards only what changed,
nothing when nothing did. See ``docs/editor-context.md``.

- :mod:`.state` — what the editor shows now, per workspace (``EditorState``) and frozen
  for one turn (``EditorSnapshot``), with the CLI's caps;
- :mod:`.reminder` — the reminder texts, worded as the CLI words them;
- :mod:`.chat` — what one chat was last told (``EditorContextSlot``), so the next turn
  can send only the changes;
- :mod:`.feature` — the feature: the reminder part on each typed turn, the chat's slot,
  resent whole after a compaction or a failed request.
"""

from ...agent.services import FeatureModule, Services
from ...protocol import EDITOR_CONTEXT
from .feature import EditorContextFeature


def setup(services: Services) -> EditorContextFeature:
    feature = EditorContextFeature(services.root, settings=lambda: services.settings)
    feature.read_selection = services.read_selection
    return feature


FEATURE = FeatureModule(
    "editor_context",
    setup,
    notifications=(EDITOR_CONTEXT,),
    doc="the open files, focus, cursor and selection ride with each typed message; qwen/editorContext",
)
