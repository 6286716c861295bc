"""Compaction as a feature: microcompaction and compression before each request, ``qwen/compress`` between turns."""

from ...agent.services import FeatureModule, Services
from ...protocol import COMPRESS
from .feature import CompactionFeature


def setup(services: Services) -> CompactionFeature:
    accounting = lambda: services.accounting  # noqa: E731 - the engine's, built after the features
    return CompactionFeature(
        services.root,
        model=services.model_client,
        settings=lambda: services.settings,
        count_content=services.counter.count_content,
        count_prompt=lambda s: accounting().count(s.context, s.skills_tracker, s.history).total_tokens,
        bound_prompt=lambda s: accounting().ceiling(s.context, s.skills_tracker, s.history),
        on_compacted=services.history_compacted,
        progress=lambda title: services.listeners.progress(title),
        runner=lambda: services.runner,
    )


FEATURE = FeatureModule(
    "compaction",
    setup,
    requests=(COMPRESS,),
    doc="microcompaction and compression of the history before a request overflows; qwen/compress",
)
