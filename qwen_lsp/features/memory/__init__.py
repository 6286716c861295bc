"""Auto-memory as a feature: its turn hooks, fork runner, fork permissions and model access."""

from ...agent.services import FeatureModule, Services
from ...protocol import MEMORY_FORGET, MEMORY_FORGET_CANDIDATES, MEMORY_LIST, MEMORY_REMEMBER, REMEMBER_SELECTION
from .feature import MemoryFeature


def setup(services: Services) -> MemoryFeature:
    listen = services.listeners
    return MemoryFeature(
        services.root,
        settings=lambda: services.settings,
        model=services.model_client,
        bare_parent=services.bare_parent,
        on_change=lambda change: listen.memory_changed(change),
        progress=lambda title: listen.progress(title),
        env=services.env,
        warning=lambda message: listen.warning(message),
    )


FEATURE = FeatureModule(
    "memory",
    setup,
    requests=(MEMORY_LIST, MEMORY_REMEMBER, MEMORY_FORGET_CANDIDATES, MEMORY_FORGET),
    commands=(REMEMBER_SELECTION,),
    doc="auto-memory: save_memory, the index in the system prompt, recall, extraction and dream, qwen/memory/*",
)
