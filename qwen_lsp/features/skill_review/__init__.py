"""Skill review as a feature: after a tool-heavy turn, a forked run drafts a skill proposal."""
