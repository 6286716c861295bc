"""Tool permissions: rules that vote on each call, merged so the strictest vote wins.

Qwen Code's scoped permission manager (``memory-scoped-agent-config.ts``) layers a run's own rules
(a memory fork may write only inside the memory roots) over the base rules
and merges their decisions by rank: ``deny(4) > ask(3) > allow(2) >
default(1)``. A rule that has no opinion answers ``default``; a call whose
merged decision is ``default`` or ``allow`` runs.

``ask`` means "a person must approve". The main chat asks through its
write tools (``agent/approvals.py``: ``tools.approvalMode``, the editor's
permission prompt); these rules serve forked runs, which never can ask:
they run in the background. So the loop turns ``ask`` into a refusal the
model sees as a tool error, naming the rule, and the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any


class Decision(IntEnum):
    """Ranked so that ``max`` is the merge (as ``memory-scoped-agent-config.ts``)."""

    DEFAULT = 1
    ALLOW = 2
    ASK = 3
    DENY = 4


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    rule: str = ""
    """The rule that decided, e.g. ``ManagedAutoMemory(edit: only within /a, /b)``; shown to the model on refusal."""


NO_OPINION = Verdict(Decision.DEFAULT)

PermissionRule = Callable[[str, Mapping[str, Any]], Verdict]
"""``(tool name, call arguments) -> Verdict``; must not raise and must not block (no file IO beyond a stat)."""


def merge(verdicts: Iterable[Verdict]) -> Verdict:
    """The strictest verdict; among equals the first, so the reported rule is stable."""
    best = NO_OPINION
    for verdict in verdicts:
        if verdict.decision > best.decision:
            best = verdict
    return best


@dataclass(frozen=True)
class Permissions:
    """The rules one run consults for every tool call, in a fixed order."""

    rules: tuple[PermissionRule, ...] = ()

    def check(self, tool: str, args: Mapping[str, Any]) -> Verdict:
        return merge(rule(tool, args) for rule in self.rules)

    def refusal(self, tool: str, args: Mapping[str, Any]) -> str | None:
        """The error text the model sees when the call may not run, or None when it may."""
        verdict = self.check(tool, args)
        why = f" ({verdict.rule})" if verdict.rule else ""
        if verdict.decision is Decision.DENY:
            return f"Permission denied: {tool} may not run with these arguments{why}."
        if verdict.decision is Decision.ASK:
            return (
                f"Permission denied: {tool} needs the user's approval here{why}, and nobody can approve it "
                "in this run (a background run has no one to ask). Do not retry it."
            )
        return None
