"""Follow-up suggestions as a feature: suggest after a turn, speculate, accept or abort."""

from ...agent.services import FeatureModule, Services
from ...protocol import SUGGESTION_ACCEPT, SUGGESTION_DISMISS
from .feature import FollowupsFeature


def setup(services: Services) -> FollowupsFeature:
    return FollowupsFeature(
        services.root,
        settings=lambda: services.settings,
        model=services.model_client,
        applier=services.applier,
        sessions=services.sessions,
        notify=lambda: services.listeners.suggestion,
        runner=lambda: services.runner,
    )


FEATURE = FeatureModule(
    "followups",
    setup,
    requests=(SUGGESTION_ACCEPT, SUGGESTION_DISMISS),
    doc="after a typed turn, a suggested next prompt and its speculative run; qwen/suggestion/*",
)
