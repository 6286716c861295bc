"""Skill review as a feature: after a tool-heavy turn, a forked run drafts a skill proposal."""

from ...agent.services import FeatureModule, Services
from ...protocol import SKILL_PROPOSAL_ACCEPT, SKILL_PROPOSAL_DISCARD
from .feature import SkillReviewFeature


def setup(services: Services) -> SkillReviewFeature:
    listen = services.listeners
    return SkillReviewFeature(
        services.root,
        settings=lambda: services.settings,
        model=services.model_client,
        existing_names=lambda: [s.name for s in services.skills.skills()],
        on_proposed=lambda proposal: listen.skill_proposed(proposal),
        progress=lambda title: listen.progress(title),
        accepted=services.reload_skills,
    )


FEATURE = FeatureModule(
    "skill_review",
    setup,
    requests=(SKILL_PROPOSAL_ACCEPT, SKILL_PROPOSAL_DISCARD),
    doc="after a tool-heavy turn a forked run drafts a skill; qwen/skillProposal/*",
)
