"""Skill review after busy sessions (docs/skills.md): count tool calls, fork a review, keep its proposal.

Qwen Code counts the tool calls of a chat and, once ``AUTO_SKILL_THRESHOLD``
(20) have run since the last review, forks a background agent that reads
the conversation and, when it shows a non-trivial, repeatable procedure
(trial and error, a change of course, a correction by the user), writes a
skill for it; otherwise it answers "Nothing to save." The counter is reset
when a review is dispatched, and also when one is already running (so a
finished review does not fire again at once): at most one review per
threshold crossing, never two at a time. A chat that wrote a skill itself
(a write under ``.qwen/skills``) is not reviewed at that check, as Qwen
Code's ``skillsModifiedInSession`` skip.

Two differences, both deliberate. Qwen Code checks on every model round
(UserQuery and ToolResult); here the check runs after each turn, with the
tool calls of all its rounds: the fork then reuses the turn's request
byte for byte (``ParentRequest.of_turn``), which a mid-turn fork could
not, since the turn is still appending to that history. And the review
never writes a skill: it drafts one into the pending area
(``skills/proposals.py``), and only the user's accept makes it a skill.

The forked run (tools, the permission rule that allows exactly one file,
the fork itself) is ``fork.py``, handed over as a :class:`SkillReviewRunner`
so the gate can be tested with a scripted runner.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from ...agent.fork import ParentRequest
from ...errors import EngineError
from ...protocol import SkillProposalAcceptResult, SkillProposalDiscardResult, SkillProposed
from ...skills.discovery import PROVIDER_DIRS, SKILLS_DIR
from ...skills.proposals import MAX_PENDING, Proposal, ProposalStore

log = logging.getLogger(__name__)

AUTO_SKILL_THRESHOLD = 20
"""Tool calls since the last review that start the next one (Qwen Code's ``AUTO_SKILL_THRESHOLD``)."""
MAX_TURNS = 8
"""Model rounds of one review (``DEFAULT_AUTO_SKILL_MAX_TURNS``)."""
MAX_SECONDS = 120.0
"""Wall-clock budget of one review (``DEFAULT_AUTO_SKILL_TIMEOUT_MS``)."""
OPEN_CALL_NOTE = "Background skill review started."

ReviewStatus = Literal["completed", "cancelled", "failed"]


@dataclass(frozen=True)
class ReviewReport:
    status: ReviewStatus
    """Only a ``completed`` review's draft is kept: one cut short by the budget or a cancel may be unfinished."""
    reason: str = ""


class SkillReviewRunner(Protocol):
    async def __call__(
        self,
        parent: ParentRequest,
        task: str,
        *,
        target: Path,
        write: Callable[[Path, str], None],
        max_turns: int,
        max_seconds: float,
        cancel: asyncio.Event,
    ) -> ReviewReport:
        """Run ``task`` as a fork of ``parent`` (the captured turn) whose only write is ``target``, through ``write``."""
        ...


def review_task(target: Path, existing: Sequence[str]) -> str:
    """The review's task message: Qwen Code's review prompt, aimed at one pending file instead of ``.qwen/skills``."""
    taken = (
        "Existing skill names (do not reuse them): " + ", ".join(existing)
        if existing
        else "No skills exist yet; any name is available."
    )
    return "\n".join(
        [
            "You are reviewing this conversation to extract a reusable skill.",
            "",
            "Look back over the conversation above. Was a non-trivial approach used to complete a task: one that needed "
            "trial and error, a change of course because of what was found along the way, or a different method or "
            "outcome than the user first expected? If so, and the approach would help with similar tasks later, write "
            "it down as a skill. A one-off answer, a routine lookup or an approach specific to a single file is not a skill.",
            "",
            "Constraints:",
            f"- Write exactly one file, with write_file: {target}",
            "- Write nothing else and change no other file; other writes and commands are refused.",
            "- The file is a SKILL.md: YAML frontmatter, then a Markdown body with the steps of the procedure.",
            f"- {taken}",
            "- The user reviews the skill before it is used, so say what it is for plainly.",
            "",
            "The file must look like this:",
            "",
            "---",
            "name: <skill-name, lowercase words joined by hyphens>",
            "description: <one line: what it does and when to use it>",
            "source: auto-skill",
            "---",
            "",
            "<markdown body with the procedure/approach>",
            "",
            "If nothing is worth saving, just say 'Nothing to save.' and stop.",
        ]
    )


@dataclass
class ToolCallCount:
    """One chat's tool calls since its last review (kept on the chat)."""

    calls: int = 0
    epoch: int = 0


class SkillReviewer:
    """Counts each chat's tool calls and runs at most one review at a time for the project."""

    def __init__(
        self,
        store: ProposalStore,
        runner: SkillReviewRunner,
        *,
        enabled: Callable[[], bool],
        existing_names: Callable[[], Collection[str]],
        on_proposed: Callable[[SkillProposed], None],
        progress: Callable[[str], Callable[[str], None]] = lambda _t: lambda _m: None,
        threshold: int = AUTO_SKILL_THRESHOLD,
    ) -> None:
        self.store = store
        self._runner = runner
        self._enabled = enabled
        self._existing = existing_names
        self._on_proposed = on_proposed
        self._progress = progress
        self._threshold = threshold
        self._epoch = 0
        """Bumped when review is switched off: counts made before do not carry over."""
        self._running: asyncio.Task[Proposal | None] | None = None
        self._cancel = asyncio.Event()

    # ----------------------------------------------------------------- the gate
    def after_turn(self, count: ToolCallCount, *, tool_calls: int, written: Sequence[str], capture: Callable[[], ParentRequest]) -> None:
        """Add the turn's tool calls to its chat's ``count``; start a review when the threshold is crossed.

        ``capture`` copies the turn for the fork, called only when a review starts.
        """
        if not self._enabled():
            self._epoch += 1  # every chat's count starts over (each notices at its next turn)
            self.cancel()
            return
        if count.epoch != self._epoch:
            count.calls, count.epoch = 0, self._epoch
        count.calls += tool_calls
        if count.calls < self._threshold:
            return
        if self._running is not None and not self._running.done():
            count.calls = 0  # a full new threshold before the next one
            return
        if self._wrote_a_skill(written):
            log.info("skill review skipped: this chat wrote a skill itself")
            return
        count.calls = 0
        self._cancel = asyncio.Event()
        self._running = asyncio.ensure_future(self._review(capture()))

    def _wrote_a_skill(self, written: Sequence[str]) -> bool:
        bases = [self.store.project_root / p / SKILLS_DIR for p in PROVIDER_DIRS]
        return any(Path(w).is_relative_to(b) for w in written for b in bases)

    # ----------------------------------------------------------------- the review
    async def _review(self, parent: ParentRequest) -> Proposal | None:
        """One review in the background: every failure is logged, none reaches the chat."""
        try:
            return await self._run(parent)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug here must cost the proposal, never the server
            log.exception("skill review failed")
            return None

    async def _run(self, parent: ParentRequest) -> Proposal | None:
        waiting = await asyncio.to_thread(self.store.pending)
        if len(waiting) >= MAX_PENDING:
            log.info("skill review skipped: %d proposals are already waiting for the user", len(waiting))
            return None
        proposal_id = self.store.new_id()
        target = self.store.draft_path(proposal_id)
        taken = sorted(set(self._existing()))

        def write(path: Path, text: str) -> None:
            self.store.write_draft(proposal_id, path, text, taken=taken)

        end = self._progress("Qwen: reviewing this chat for a reusable skill")
        outcome = "nothing to propose"
        try:
            report = await self._runner(
                parent,
                review_task(target, taken),
                target=target,
                write=write,
                max_turns=MAX_TURNS,
                max_seconds=MAX_SECONDS,
                cancel=self._cancel,
            )
            proposal = await asyncio.to_thread(self._keep, proposal_id, report)
            if proposal is not None:
                outcome = f"proposed skill {proposal.name}"
                self._on_proposed(proposed(proposal))
            return proposal
        except BaseException:
            await asyncio.shield(asyncio.to_thread(self.store.drop, proposal_id))
            outcome = "stopped"
            raise
        finally:
            end(outcome)

    def _keep(self, proposal_id: str, report: ReviewReport) -> Proposal | None:
        """The draft when the review completed and left a valid one; otherwise its slot is removed."""
        if report.status != "completed":
            log.info("skill review %s (%s); no proposal", report.status, report.reason)
            self.store.drop(proposal_id)
            return None
        try:
            return self.store.load(proposal_id)
        except EngineError as exc:
            if exc.kind != "not_found":
                log.warning("skill review left an unusable draft: %s", exc.message)
            self.store.drop(proposal_id)
            return None

    # ----------------------------------------------------------------- the user's answer
    def pending(self) -> list[SkillProposed]:
        """Proposals still waiting (blocking: reads the pending area), to announce again after a restart."""
        return [proposed(p) for p in self.store.pending()]

    async def accept(self, proposal_id: str) -> SkillProposalAcceptResult:
        path = await asyncio.to_thread(self.store.accept, proposal_id)
        return SkillProposalAcceptResult(path=str(path))

    async def discard(self, proposal_id: str) -> SkillProposalDiscardResult:
        await asyncio.to_thread(self.store.discard, proposal_id)
        return SkillProposalDiscardResult()

    # ----------------------------------------------------------------- lifecycle
    @property
    def running(self) -> asyncio.Task[Proposal | None] | None:
        return self._running

    def cancel(self) -> None:
        """Stop a running review; its draft is removed and nothing is proposed."""
        self._cancel.set()

    async def drain(self) -> None:
        self.cancel()
        if self._running is not None:
            await asyncio.gather(self._running, return_exceptions=True)


def proposed(proposal: Proposal) -> SkillProposed:
    return SkillProposed(proposal_id=proposal.id, name=proposal.name, description=proposal.description, text=proposal.text)
