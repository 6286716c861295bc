"""The ``<system-reminder>`` parts a typed message starts with, in Qwen Code 0.24's order.

The first message of a session carries the skills listing, then the
environment prelude; later ones carry only skill deltas. Newly active
conditional rules follow either way. The listing and the rules are tagged
for the Context picture (``picture.py``); the environment prelude counts as
system there.
"""

from __future__ import annotations

from ..llm.content import Part
from ..sessions.registry import ChatSession
from ..skills import SkillManager
from .picture import tag


def reminder_parts(session: ChatSession, skills: SkillManager) -> list[Part]:
    parts: list[Part] = []
    listing = session.skills_tracker.reminder(skills)
    if listing:
        parts.append({"text": listing})
        tag(session, "skills", [listing])
    if not session.history:
        startup = session.context.startup_reminder()
        parts.append({"text": startup})
        tag(session, "system", [startup])
    rules = session.context.pending_rule_reminder()
    if rules:
        parts.append({"text": rules})
        tag(session, "context files", [rules])
    return parts
